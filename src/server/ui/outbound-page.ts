import { DELIVERY_STATES, type OutboundListing } from '../../app/runs/outbound-operation.ts';
import { html } from './html.ts';
import { filterSelect, layout, listTable, type PageSession } from './layout.ts';

/** Outbound events across agents, newest first, filtered by agent and delivery state. */
export function outboundPage(
  session: PageSession,
  listing: OutboundListing,
  agents: readonly string[],
  filter: { agent?: string; state?: string },
): string {
  return layout(
    'Outbound',
    session,
    html`<h1>Outbound events</h1>
      <form method="get" action="/outbound" class="inline">
        ${filterSelect('agent', 'Agent', filter.agent, [['', 'every agent'], ...agents])}
        ${filterSelect('state', 'Delivery', filter.state, [['', 'any'], ...DELIVERY_STATES])}
        <button>Show</button>
      </form>
      ${listTable(
        listing.events,
        'No outbound events match.',
        ['When', 'Agent', 'Effect', 'Target', 'Delivery', 'Attempts', 'Run'],
        (e) =>
          html`<tr class="effect" data-state="${e.state}">
            <td>${e.createdAt.slice(0, 19).replace('T', ' ')}</td>
            <td>${e.agent}</td>
            <td><code>${e.kind}</code></td>
            <td>${e.target}</td>
            <td>
              <span class="status ${e.state}">${e.state}</span>${
                typeof e['lastError'] === 'string' && e.state !== 'delivered'
                  ? html` <span class="muted">${e['lastError']}</span>`
                  : ''
              }
            </td>
            <td>${e.attempts}</td>
            <td><a href="/runs/${e.run_id}">${e.run_id.slice(0, 8)}</a></td>
          </tr>`,
      )}
      <p class="muted">
        The same from a terminal: <code>mesh runs effects [--agent A] [--state failed]</code>; over
        the API: <code>GET /api/outbound</code>.
      </p>`,
  );
}
