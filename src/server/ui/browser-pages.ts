import type {
  BrowserBackendAnswer,
  BrowserGrantAnswer,
  BrowserSessionAnswer,
} from '../../app/backends/browser-operations.ts';
import { BROWSER_KINDS } from '../../app/backends/kinds.ts';
import { keyForm, postButton } from './controls.ts';
import { addBackendForm } from './rented-backend-ui.ts';
import { html } from './html.ts';
import { csrfField, layout, listTable, picker, type PageSession } from './layout.ts';

/** What the browsers page shows: `browsers.list`'s answer. */
export interface BrowsersState {
  readonly backends: readonly BrowserBackendAnswer[];
  readonly grants: readonly BrowserGrantAnswer[];
  readonly sessions: readonly BrowserSessionAnswer[];
}

/** A live session's Live View: Mesh's own page, or the vendor's (opened apart from Mesh). */
function liveView(url: string | null) {
  if (url === null) return html`<span class="muted">—</span>`;
  return url.startsWith('/')
    ? html`<a href="${url}">Live View</a>`
    : html`<a href="${url}" target="_blank" rel="noopener noreferrer">Live View</a>`;
}

/** One backend's row: its kind, whether it is for development, its key (and replacing it). */
function backendRow(session: PageSession, b: BrowserBackendAnswer) {
  return html`<tr data-backend="${b.name}">
    <td>${b.name}</td>
    <td>${b.kind}</td>
    <td>
      ${
        b.development
          ? html`<span class="badge effect">development only</span>`
          : html`<span class="muted">vendor</span>`
      }
    </td>
    <td>
      ${
        b.api_key === null
          ? html`<span class="muted">—</span>`
          : html`${b.api_key.present ? 'present' : 'absent'}
            ${keyForm(session, `/browsers/backends/${encodeURIComponent(b.name)}/key`)}`
      }
    </td>
    <td>
      ${postButton(session, `/browsers/backends/${encodeURIComponent(b.name)}/delete`, 'Remove', { danger: true })}
    </td>
  </tr>`;
}

/**
 * Browser backends (development ones marked), grants, live sessions with their Live View, and the
 * forms to add, remove, grant and revoke: the same operations as `mesh browsers` and the API.
 */
export function browsersPage(
  session: PageSession,
  state: BrowsersState,
  agents: readonly string[] = [],
): string {
  return layout(
    'Browsers',
    session,
    html`<h1>Browsers</h1>
      <h2>Backends</h2>
      ${listTable(
        state.backends,
        'No browser backend yet: browser tools are not offered to any agent.',
        ['Name', 'Kind', '', 'API key', ''],
        (b) => backendRow(session, b),
      )}
      <h2>Grants</h2>
      ${listTable(
        state.grants,
        'No agent has a browser backend.',
        ['Agent', 'Backend', 'Loopback', ''],
        (g) =>
          html`<tr data-grant="${g.agent}">
            <td>${g.agent}</td>
            <td>${g.backend}</td>
            <td>${g.allow_loopback ? 'allowed' : html`<span class="muted">refused</span>`}</td>
            <td>
              ${postButton(session, `/browsers/grants/${encodeURIComponent(g.agent)}/delete`, 'Revoke', { danger: true })}
            </td>
          </tr>`,
      )}
      <h2>Live sessions</h2>
      ${listTable(
        state.sessions,
        'No live browser session.',
        ['Session', 'Run', 'Agent', 'Backend', 'State', 'Age', ''],
        (s) =>
          html`<tr data-session="${s.id}">
            <td><code>${s.id.slice(0, 8)}</code></td>
            <td><a href="/runs/${s.run_id}">${s.run_id.slice(0, 8)}</a> (${s.run_status})</td>
            <td>${s.agent}</td>
            <td>${s.backend}</td>
            <td>${s.state.replace('_', ' ')}</td>
            <td>${String(s.age_seconds)} s</td>
            <td>${liveView(s.live_view_url)}</td>
          </tr>`,
      )}
      <h2>Add a backend</h2>
      ${addBackendForm(session, '/browsers/backends', BROWSER_KINDS)}
      <h2>Grant a backend to an agent</h2>
      <form method="post" action="/browsers/grants" class="stack">
        ${csrfField(session)} ${picker(session, 'agent', 'Agent', agents)}
        ${picker(
          session,
          'backend',
          'Backend',
          state.backends.map((b) => b.name),
        )}
        <label
          ><input type="checkbox" name="allow_loopback" value="true" /> allow loopback addresses
          (development backends only)</label
        >
        <button>Grant</button>
      </form>`,
  );
}
