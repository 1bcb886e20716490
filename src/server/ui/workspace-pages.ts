import type { describeWorkspaces } from '../../app/backends/workspace-admin.ts';
import { WORKSPACE_KINDS } from '../../app/backends/kinds.ts';
import { keyForm, postButton } from './controls.ts';
import { addBackendForm } from './rented-backend-ui.ts';
import { html } from './html.ts';
import { csrfField, layout, listTable, picker, type PageSession } from './layout.ts';

type WorkspacesState = Awaited<ReturnType<typeof describeWorkspaces>>;

/** Backends (development ones marked), grants, live workspaces, and the forms to add and grant. */
export function workspacesPage(
  session: PageSession,
  state: WorkspacesState,
  agents: readonly string[] = [],
): string {
  return layout(
    'Workspaces',
    session,
    html`<h1>Workspaces</h1>
      <h2>Backends</h2>
      ${listTable(
        state.backends,
        'No workspace backend yet: workspace tools are not offered to any agent.',
        ['Name', 'Kind', '', 'API key', ''],
        (b) =>
          html`<tr data-backend="${b.name}">
            <td>${b.name}</td>
            <td>${b.kind}</td>
            <td>
              ${
                b.development
                  ? html`<span class="badge effect">development only</span>`
                  : html`<span class="muted">managed</span>`
              }
            </td>
            <td>
              ${
                b.apiKey === null
                  ? html`<span class="muted">—</span>`
                  : html`${b.apiKey ? 'present' : 'absent'}
                    ${keyForm(session, `/workspaces/backends/${encodeURIComponent(b.name)}/key`)}`
              }
            </td>
            <td>
              ${postButton(session, `/workspaces/backends/${encodeURIComponent(b.name)}/delete`, 'Remove', { danger: true })}
            </td>
          </tr>`,
      )}
      <h2>Grants</h2>
      ${listTable(
        state.grants,
        'No agent has a workspace backend.',
        ['Agent', 'Backend', 'Egress allowed to'],
        (g) =>
          html`<tr data-grant="${g.agent}">
            <td>${g.agent}</td>
            <td>${g.backend}</td>
            <td>
              ${g.egress.length === 0 ? html`<span class="muted">no host</span>` : g.egress.join(', ')}
            </td>
          </tr>`,
      )}
      <h2>Live workspaces</h2>
      ${listTable(
        state.workspaces,
        'No live workspace.',
        ['Workspace', 'Run', 'Agent', 'Backend', 'Age', 'Compute'],
        (w) =>
          html`<tr data-workspace="${w.id}">
            <td><code>${w.id.slice(0, 8)}</code></td>
            <td><a href="/runs/${w.run}">${w.run.slice(0, 8)}</a> (${w.runStatus})</td>
            <td>${w.agent}</td>
            <td>${w.backend}</td>
            <td>${String(w.ageSeconds)} s</td>
            <td>${String(w.computeSeconds)} s</td>
          </tr>`,
      )}
      <h2>Add a backend</h2>
      ${addBackendForm(session, '/workspaces/backends', WORKSPACE_KINDS)}
      <h2>Grant a backend to an agent</h2>
      <form method="post" action="/workspaces/grants" class="stack">
        ${csrfField(session)} ${picker(session, 'agent', 'Agent', agents)}
        ${picker(
          session,
          'backend',
          'Backend',
          state.backends.map((b) => b.name),
        )}
        <label
          >Allowed hosts (one per line, host or host:port)
          <textarea name="allow_hosts" rows="3"></textarea>
        </label>
        <button>Grant</button>
      </form>`,
  );
}
