import type { describeWeb } from '../../app/backends/web-admin.ts';
import { keyForm, postButton } from './controls.ts';
import { html } from './html.ts';
import { csrfField, layout, listTable, picker, type PageSession } from './layout.ts';

type WebState = Awaited<ReturnType<typeof describeWeb>>;

/** Web providers (what each serves, its ceiling, whether its key is there), grants, and forms. */
export function webPage(
  session: PageSession,
  state: WebState,
  agents: readonly string[] = [],
): string {
  return layout(
    'Web',
    session,
    html`<h1>Web search and reading</h1>
      <p class="muted">
        web_search and web_read go through a hosted provider registered here; Mesh never fetches a
        page itself. An agent is offered a verb only when a provider granted to it can serve it.
      </p>
      <h2>Providers</h2>
      ${listTable(
        state.providers,
        'No web provider yet: web_search and web_read are not offered to any agent.',
        ['Name', 'Kind', 'Base URL', 'Serves', 'Calls per run', 'API key', ''],
        (p) =>
          html`<tr data-web-provider="${p.name}">
            <td>${p.name}</td>
            <td>${p.kind}</td>
            <td>
              <code>${p.baseUrl}</code>${
                p.allowLoopbackHttp ? html` <span class="badge effect">loopback http</span>` : ''
              }
            </td>
            <td>${p.serves.join(', ')}</td>
            <td>
              <form
                method="post"
                action="/web/providers/${encodeURIComponent(p.name)}/ceiling"
                class="inline"
              >
                ${csrfField(session)}
                <input
                  name="max_calls_per_run"
                  type="number"
                  min="1"
                  max="10000"
                  value="${String(p.maxCallsPerRun)}"
                  aria-label="calls per run"
                />
                <button>Set</button>
              </form>
            </td>
            <td>
              ${p.apiKey ? 'present' : 'absent'}
              ${keyForm(session, `/web/providers/${encodeURIComponent(p.name)}/key`)}
            </td>
            <td>
              ${postButton(session, `/web/providers/${encodeURIComponent(p.name)}/delete`, 'Remove', { danger: true })}
            </td>
          </tr>`,
      )}
      <h2>Grants</h2>
      ${listTable(
        state.grants,
        'No agent has a web provider.',
        ['Agent', 'Provider', 'Granted by', ''],
        (g) =>
          html`<tr data-web-grant="${g.agent}:${g.provider}">
            <td>${g.agent}</td>
            <td>${g.provider}</td>
            <td>${g.grantedBy}</td>
            <td>
              ${postButton(session, '/web/grants/revoke', 'Revoke', {
                danger: true,
                fields: { agent: g.agent, provider: g.provider },
              })}
            </td>
          </tr>`,
      )}
      <h2>Add a provider</h2>
      <form method="post" action="/web/providers" class="stack">
        ${csrfField(session)}
        <label>Name <input name="name" required placeholder="exa" /></label>
        <label
          >Kind
          <select name="kind">
            <option value="exa">exa (search and read)</option>
            <option value="brave">brave (search)</option>
            <option value="tavily">tavily (search and read)</option>
            <option value="cloudflare">cloudflare Browser Run (read)</option>
          </select></label
        >
        <label>API key <input name="api_key" type="password" autocomplete="off" required /></label>
        <label
          >Base URL (optional: a gateway or self-hosted endpoint)
          <input name="base_url" placeholder="the vendor's own API"
        /></label>
        <label
          ><input type="checkbox" name="allow_loopback_http" value="true" /> development: allow
          plain http to a loopback base URL</label
        >
        <label
          >Calls per run
          <input name="max_calls_per_run" type="number" min="1" max="10000" value="20"
        /></label>
        <label>Cloudflare account id <input name="account_id" /></label>
        <button>Add provider</button>
      </form>
      <h2>Grant a provider to an agent</h2>
      <form method="post" action="/web/grants" class="stack">
        ${csrfField(session)} ${picker(session, 'agent', 'Agent', agents)}
        ${picker(
          session,
          'provider',
          'Provider',
          state.providers.map((p) => p.name),
        )}
        <button>Grant</button>
      </form>`,
  );
}
