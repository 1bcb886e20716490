import type { AgentRecord } from '../../app/records.ts';
import type { AgentTools } from '../../app/packages/tool-operations.ts';
import { html } from './html.ts';
import { agentHeader, csrfField, layout, listTable, type PageSession } from './layout.ts';

/**
 * An agent's tools as its next turn would see them, and a form that calls one as the operator:
 * the `agents.tools` and `tools.call` operations, as the CLI and the API offer them.
 */
export function callPage(
  session: PageSession,
  agent: AgentRecord,
  tools: AgentTools,
  chosen = '',
): string {
  const base = `/agents/${encodeURIComponent(agent.name)}`;
  return layout(
    `${agent.name} · Call a tool`,
    session,
    html`${agentHeader(agent, 'tools')}
      <h2>Call a tool as the operator</h2>
      <form method="post" action="${base}/call" class="stack">
        ${csrfField(session)}
        <label
          >Tool
          <select name="tool" required>
            ${tools.tools.map(
              (t) =>
                html`<option value="${t.name}" ${t.name === chosen ? html` selected` : ''}>
                  ${t.name}${t.offered ? '' : ' (not offered to the model)'}
                </option>`,
            )}
          </select></label
        >
        <label
          >Arguments (a JSON object)
          <textarea name="arguments" rows="4" spellcheck="false">{}</textarea>
        </label>
        <button>Call</button>
      </form>
      <p class="muted">
        The call is a run of its own, through the executor, the commit boundary and the ledger; its
        run page opens when it ends. From a terminal:
        <code>mesh tools call TOOL --agent ${agent.name} --args JSON</code>.
      </p>
      <h2>What a ${tools.audience} conversation's turn is offered</h2>
      ${listTable(
        tools.tools,
        'No tools.',
        ['Tool', 'Class', 'From', 'Offered'],
        (t) =>
          html`<tr>
            <td>${t.name}</td>
            <td>${t.class ?? '?'}</td>
            <td>${t.origin ?? '?'}</td>
            <td>
              ${
                t.offered
                  ? html`<span class="present">offered</span>`
                  : html`<span class="absent">withheld</span>
                      <div class="muted small">${t.reason ?? ''}</div>`
              }
            </td>
          </tr>`,
      )}`,
  );
}
