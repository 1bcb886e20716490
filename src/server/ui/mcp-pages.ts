import type { ConnectionView } from '../../app/mcp/catalog.ts';
import type { AgentRecord, ToolProviderRecord } from '../../app/records.ts';
import { html, type Html } from './html.ts';
import { audienceForm, toggle, postButton } from './controls.ts';
import { agentHeader, csrfField, layout, listTable, time, type PageSession } from './layout.ts';
import { toolTable } from './tool-table.ts';

function connectionSection(session: PageSession, agent: AgentRecord, c: ConnectionView): Html {
  const base = `/agents/${encodeURIComponent(agent.name)}/mcp/${encodeURIComponent(c.provider.slug)}`;
  const changed = c.tools.filter((t) => t.status === 'new' || t.status === 'changed').length;
  return html`<section class="package" data-provider="${c.provider.slug}">
    <h2>${c.provider.slug} <small>${c.provider.url}</small></h2>
    <p>
      Connected with ${c.binding.authKind === 'oauth' ? 'OAuth' : 'a bearer token'}
      (${c.credentialPresent ? html`<span class="present">credential present</span>` : html`<span class="absent">no credential</span>`}).
      Catalog checked
      ${time(c.binding.catalogCheckedAt)}${
        c.binding.catalogError
          ? html` — <span class="absent">last check failed: ${c.binding.catalogError}</span>`
          : ''
      }.
      ${changed > 0 ? html`<strong class="absent">${changed} new or changed since the last review.</strong>` : ''}
    </p>
    ${toolTable(c.tools, {
      name: (t) => t.tool,
      description: (t) => t.description,
      note: (t) =>
        html`${t.readOnlyHint === true ? html`<div class="muted small">server hint: read-only (advisory)</div>` : ''}${t.withheldReason && t.status !== 'removed' ? html`<div class="absent small" data-withheld>not offered: ${t.withheldReason}</div>` : ''}`,
      attributes: (t) => html` data-tool="${t.tool}" data-status="${t.status}"`,
      columns: [
        {
          heading: 'Status',
          cell: (t) =>
            html`<span class="badge ${t.status === 'reviewed' ? 'query' : 'effect'}"
              >${t.status}</span
            >`,
        },
        {
          heading: 'Semantics',
          cell: (t) => html`<span class="badge ${t.semantics}">${t.semantics}</span>`,
        },
        {
          heading: 'Fingerprint',
          cell: (t) =>
            html`<code title="${t.fingerprint}">${t.fingerprint.slice(0, 12)}</code
              >${t.previousFingerprint ? html`<div class="muted small">was ${t.previousFingerprint.slice(0, 12)}</div>` : ''}`,
        },
        {
          heading: 'Legacy query',
          cell: (t) =>
            t.status === 'removed'
              ? html``
              : html`${toggle(
                  session,
                  `${base}/tools/${encodeURIComponent(t.name)}`,
                  'legacy_query',
                  t.legacyQueryMarked,
                  {
                    on: 'Marked',
                    off: 'Not marked',
                    set: `Mark ${t.tool} as a legacy query`,
                    unset: `Unmark ${t.tool}`,
                  },
                )}${
                  t.legacyQueryMarkLost
                    ? html`<div class="muted small" data-mark-lost>
                        mark lost: the definition changed since it was marked
                      </div>`
                    : ''
                }`,
        },
        {
          heading: 'Offered',
          cell: (t) =>
            t.status === 'removed'
              ? html`<span class="muted">removed</span>`
              : toggle(
                  session,
                  `${base}/tools/${encodeURIComponent(t.name)}`,
                  'excluded',
                  !t.excluded,
                  {
                    on: 'Included',
                    off: 'Excluded',
                    set: `Include ${t.tool}`,
                    unset: `Exclude ${t.tool}`,
                  },
                  { whenOn: 'true', whenOff: 'false' },
                ),
        },
      ],
    })}
    <div class="actions">
      ${postButton(session, `${base}/check`, 'Check now')}
      ${postButton(session, `${base}/review`, 'Mark reviewed')}
      ${postButton(session, `${base}/disconnect`, 'Disconnect', { danger: true })}
    </div>
    ${audienceForm(session, `${base}/scopes`, c.binding.audiences, 'Save scopes')}
  </section>`;
}

/** An agent's MCP connections: catalogs with fingerprints and changes, and the connect form. */
export function mcpPage(
  session: PageSession,
  agent: AgentRecord,
  providers: readonly ToolProviderRecord[],
  connections: readonly ConnectionView[],
): string {
  const connected = new Set(connections.map((c) => c.provider.id));
  const open = providers.filter((p) => !connected.has(p.id));
  const base = `/agents/${encodeURIComponent(agent.name)}/mcp`;
  return layout(
    `${agent.name} · MCP`,
    session,
    html`${agentHeader(agent, 'mcp')}
      <p class="muted">
        Remote MCP servers this agent reaches with its own account. New and changed tools are
        offered with effect semantics; a definition marked as a legacy query keeps query semantics
        only while its fingerprint is unchanged. Server hints such as read-only never raise trust.
      </p>
      ${connections.length === 0 ? html`<p class="muted">No connections yet.</p>` : connections.map((c) => connectionSection(session, agent, c))}
      ${
        open.length > 0
          ? html`<h2>Connect</h2>
              <form method="post" action="${base}/connect" class="stack">
                ${csrfField(session)}
                <label
                  >Server
                  <select name="provider">
                    ${open.map((p) => html`<option value="${p.slug}">${p.slug} — ${p.url}</option>`)}
                  </select></label
                >
                <label
                  >The agent's bearer token
                  <input
                    type="password"
                    name="token"
                    autocomplete="off"
                    placeholder="write-only"
                    required
                /></label>
                <button>Connect with token</button>
              </form>
              <form method="post" action="${base}/oauth" class="stack">
                ${csrfField(session)}
                <label
                  >Server
                  <select name="provider">
                    ${open.map((p) => html`<option value="${p.slug}">${p.slug}</option>`)}
                  </select></label
                >
                <button>Connect with OAuth</button>
                <p class="muted">
                  Sign in at the server as this agent's account; Mesh keeps the tokens, encrypted,
                  on this connection.
                </p>
              </form>`
          : providers.length === 0
            ? html`<p class="muted">
                Register a server on the <a href="/providers">providers page</a> first.
              </p>`
            : ''
      }`,
  );
}

/** The providers page's section for remote MCP servers. */
export function mcpProvidersSection(
  session: PageSession,
  providers: readonly ToolProviderRecord[],
): Html {
  return html`<h2>Remote MCP servers</h2>
    ${listTable(
      providers,
      'None registered.',
      ['Slug', 'URL', 'Registered', ''],
      (p) =>
        html`<tr data-mcp-provider="${p.slug}">
          <td><code>${p.slug}</code></td>
          <td>
            ${p.url}${p.allowLoopbackHttp ? html` <span class="badge effect">loopback http (development)</span>` : ''}
          </td>
          <td>${time(p.createdAt)}</td>
          <td>
            ${postButton(session, `/mcp/providers/${encodeURIComponent(p.slug)}/delete`, 'Remove', { danger: true })}
          </td>
        </tr>`,
    )}
    <form method="post" action="/mcp/providers" class="stack">
      ${csrfField(session)}
      <label
        >Slug (tools are named <code>slug__tool</code>)
        <input name="slug" required pattern="[a-z][a-z0-9]*(_[a-z0-9]+)*"
      /></label>
      <label
        >URL (Streamable HTTP)
        <input name="url" type="url" required placeholder="https://mcp.example.com/mcp"
      /></label>
      <label
        ><input type="checkbox" name="allow_loopback_http" value="true" /> allow plain http to
        loopback (development only)</label
      >
      <button>Register server</button>
    </form>`;
}

/** The step between starting OAuth and the authorization server: a link the operator follows. */
export function oauthContinuePage(
  session: PageSession,
  agent: AgentRecord,
  slug: string,
  authorizationUrl: URL,
): string {
  return layout(
    `${agent.name} · OAuth`,
    session,
    html`${agentHeader(agent, 'mcp')}
      <section class="package">
        <h2>Sign in to ${slug} as ${agent.name}</h2>
        <p>
          Continue at ${authorizationUrl.host}. Sign in with the account this agent acts as; you
          come back here when it is done.
        </p>
        <p>
          <a class="button" id="authorize" href="${authorizationUrl.toString()}"
            >Continue to ${authorizationUrl.host}</a
          >
        </p>
      </section>`,
  );
}
