import type { PackageView } from '../../app/packages/packages.ts';
import type { SecretSlotView } from '../../app/packages/secret-slot.ts';
import type { ModelProviderRecord } from '../../app/records.ts';
import { secretStatus, postButton } from './controls.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, listTable, type PageSession } from './layout.ts';
import { manifestToolTable } from './tool-table.ts';

/** The model providers with their key's presence, the forms to add one, and `more` below. */
export function providersPage(
  session: PageSession,
  providers: readonly (ModelProviderRecord & { apiKey: SecretSlotView | null })[],
  more: Html = html``,
): string {
  return layout(
    'Model providers',
    session,
    html`<h1>Model providers</h1>
      ${listTable(
        providers,
        'No providers yet.',
        ['Name', 'Kind', 'Endpoint', 'Context', 'API key', ''],
        (p) =>
          html`<tr data-provider="${p.name}">
            <td>${p.name}</td>
            <td>${p.kind}</td>
            <td>${p.baseUrl ?? html`<span class="muted">—</span>`}</td>
            <td>${p.contextTokens}</td>
            <td>
              ${
                p.apiKey
                  ? html`${secretStatus(p.apiKey)}
                      <form
                        method="post"
                        action="/providers/${encodeURIComponent(p.name)}/api-key"
                        class="inline"
                      >
                        ${csrfField(session)}<input
                          type="password"
                          name="value"
                          autocomplete="off"
                          placeholder="new key"
                          required
                        /><button>Replace</button>
                      </form>`
                  : html`<span class="muted">scripted</span>`
              }
            </td>
            <td>
              ${postButton(session, `/providers/${encodeURIComponent(p.name)}/delete`, 'Delete', { danger: true })}
            </td>
          </tr>`,
      )}
      <h2>Add an OpenAI-compatible endpoint</h2>
      <form method="post" action="/providers" class="stack">
        ${csrfField(session)}<input type="hidden" name="kind" value="openai_compatible" />
        <label>Name <input name="name" required /></label>
        <label
          >Base URL
          <input name="base_url" type="url" required placeholder="https://openrouter.ai/api/v1"
        /></label>
        <label>API key <input name="api_key" type="password" autocomplete="off" required /></label>
        <label
          >Context tokens
          <input name="context_tokens" type="number" min="1000" step="1" placeholder="32000"
        /></label>
        <button>Add provider</button>
      </form>
      <h2>Add a scripted provider</h2>
      <form method="post" action="/providers" class="stack">
        ${csrfField(session)}<input type="hidden" name="kind" value="scripted" />
        <label>Name <input name="name" required /></label>
        <label
          >Script (JSON)
          <textarea name="script" rows="6" required>{"fallback": {"content": "Hello."}}</textarea>
        </label>
        <button>Add provider</button>
      </form>
      ${more}`,
  );
}

/** The installed packages, as their manifests declare them. */
export function packagesPage(session: PageSession, packages: readonly PackageView[]): string {
  return layout(
    'Packages',
    session,
    html`<h1>Packages</h1>
      <p class="muted">
        Installed tool packages, as their manifests declare them: open one to see its tools and
        fields. Enable and configure them per agent on the agent's Tools tab.
      </p>
      ${packages.map(
        (p) =>
          html`<details class="package" data-package="${p.id}">
            <summary>
              <strong>${p.id}</strong> <small class="muted">${p.version}</small> · ${p.tools.length}
              tool${p.tools.length === 1 ? '' : 's'}
              <span class="muted">— ${p.description}</span>
            </summary>
            ${manifestToolTable(p.tools)}
            ${
              p.config.length > 0
                ? html`<h3>Fields</h3>
                    <ul>
                      ${p.config.map((f) => html`<li><code>${f.key}</code> <span class="badge ${f.disposition}">${f.disposition}</span> ${f.type} — ${f.description}</li>`)}
                    </ul>`
                : ''
            }
          </details>`,
      )}`,
  );
}
