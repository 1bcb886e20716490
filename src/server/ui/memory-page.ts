import type { MemoryAnswer } from '../../app/agents/memory-operation.ts';
import type { AgentRecord } from '../../app/records.ts';
import { html } from './html.ts';
import { agentHeader, layout, listTable, type PageSession } from './layout.ts';

/** The Memories tab: what the agent remembers, and what it corrected or forgot, with provenance. */
export function memoriesPage(
  session: PageSession,
  agent: AgentRecord,
  memories: readonly MemoryAnswer[],
): string {
  const short = (id: string | null) => (id ? id.slice(0, 8) : '');
  return layout(
    `${agent.name} · Memories`,
    session,
    html`${agentHeader(agent, 'memories')}
      ${listTable(
        memories,
        `${agent.name} remembers nothing yet.`,
        ['Memory', 'State', 'Written', 'By'],
        (m) =>
          html`<tr data-memory="${m.id}" data-status="${m.status}">
            <td>
              ${m.content}
              <div class="muted small">
                <code>${short(m.id)}</code>${
                  m.supersedes ? html` · corrects <code>${short(m.supersedes)}</code>` : ''
                }${
                  m.superseded_by
                    ? html` · corrected by <code>${short(m.superseded_by)}</code>`
                    : ''
                }${m.forgotten_reason ? html` · forgotten: ${m.forgotten_reason}` : ''}
              </div>
            </td>
            <td><span class="badge ${m.status === 'active' ? 'query' : ''}">${m.status}</span></td>
            <td>${m.created_at.slice(0, 19).replace('T', ' ')}</td>
            <td>
              ${m.run_id ? html`<a href="/runs/${m.run_id}">run ${short(m.run_id)}</a>` : html`<span class="muted">operator</span>`}
            </td>
          </tr>`,
      )}
      <p class="muted">
        The same from a terminal: <code>mesh agents memories ${agent.name}</code>; over the API:
        <code>GET /api/agents/${agent.name}/memories</code>.
      </p>`,
  );
}
