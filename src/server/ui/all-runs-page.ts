import type { RunListing } from '../../app/runs/operations.ts';
import { RUN_STATUSES } from '../../app/runs/operations.ts';
import { html } from './html.ts';
import { filterSelect, layout, listTable, time, type PageSession } from './layout.ts';

/** Every agent's runs, newest first, filtered by agent and status as the operation is. */
export function allRunsPage(
  session: PageSession,
  listing: RunListing,
  agents: readonly string[],
  filter: { agent?: string; status?: string; hours?: string },
): string {
  return layout(
    'Runs',
    session,
    html`<h1>Runs</h1>
      <form method="get" action="/runs" class="inline">
        ${filterSelect('agent', 'Agent', filter.agent, [['', 'every agent'], ...agents])}
        ${filterSelect('status', 'Status', filter.status, [['', 'any'], ...RUN_STATUSES])}
        ${filterSelect('hours', 'Started', filter.hours, [
          ['', 'any time'],
          ['1', 'in the last hour'],
          ['24', 'in the last day'],
          ['168', 'in the last week'],
        ])}
        <button>Show</button>
      </form>
      ${listTable(
        listing.runs,
        'No runs match.',
        ['Run', 'Agent', 'Status', 'Started', 'Finished'],
        (r) =>
          html`<tr>
            <td><a href="/runs/${r.run_id}">${r.short_id}</a></td>
            <td><a href="/agents/${encodeURIComponent(r.agent)}/runs">${r.agent}</a></td>
            <td>
              <span class="status ${r.status}">${r.status}</span
              >${r.reason ? html` <span class="muted">${r.reason}</span>` : ''}
            </td>
            <td>${time(new Date(r.created_at))}</td>
            <td>${r.finished_at === null ? '' : time(new Date(r.finished_at))}</td>
          </tr>`,
      )}
      <p class="muted">
        From a terminal: <code>mesh runs list [--agent A] [--status S]</code>; over the API:
        <code>GET /api/runs</code>. A run is named by its first 8 characters anywhere.
      </p>`,
  );
}
