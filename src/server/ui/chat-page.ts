import type {
  AgentRecord,
  ConversationRecord,
  MessageRecord,
  RunRecord,
} from '../../app/records.ts';
import type { QuestionRecord } from '../../app/records.ts';
import { html, type Html } from './html.ts';
import { questionPanel } from './question-panel.ts';
import { agentHeader, csrfField, layout, sticky, time, type PageSession } from './layout.ts';
import { isLive } from './run-pages.ts';

/** The Chat tab: the agent's conversations, the open one's messages with their runs, the send form. */
export function chatPage(
  session: PageSession,
  agent: AgentRecord,
  conversations: readonly (ConversationRecord & { messages: number })[],
  current:
    | {
        conversation: ConversationRecord;
        messages: readonly MessageRecord[];
        runs: readonly RunRecord[];
        /** The questions runs asked here, each shown under the message that asked it. */
        questions: readonly QuestionRecord[];
        /** The messages that are progress notes a run posted while it went on. */
        progress?: ReadonlySet<string>;
      }
    | undefined,
): string {
  const base = `/agents/${encodeURIComponent(agent.name)}/chat`;
  const runFor = new Map(current?.runs.map((r) => [r.inboundMessageId, r]) ?? []);
  const questionFor = new Map(current?.questions.map((q) => [q.messageId, q]) ?? []);
  const following = current?.runs.filter(isLive).at(-1);
  return layout(
    `${agent.name} · Chat`,
    session,
    html`${agentHeader(agent, 'chat')}
      <div class="chat">
        <aside>
          <a href="${base}" class="${current ? '' : 'active'}">New conversation</a>
          ${conversations.map(
            (c) =>
              html`<a
                href="${base}?conversation=${c.id}"
                class="${current?.conversation.id === c.id ? 'active' : ''}"
                >${time(c.createdAt)}
                <span class="muted">${c.audience}, ${c.messages} messages</span></a
              >`,
          )}
        </aside>
        <section class="conversation">
          ${
            current
              ? html`<ol
                  class="messages"
                  ${following ? html`data-reply-events="/runs/${following.id}/events" data-agent="${agent.name}"` : ''}
                >
                  ${current.messages.map((m) =>
                    messageItem(session, agent, m, {
                      run: m.direction === 'inbound' ? runFor.get(m.id) : undefined,
                      question: m.direction === 'outbound' ? questionFor.get(m.id) : undefined,
                      note: current.progress?.has(m.id) === true,
                      back: `${base}?conversation=${current.conversation.id}`,
                    }),
                  )}
                </ol>`
              : html`<p class="muted">Start a conversation with ${agent.name}.</p>`
          }
          <form method="post" action="${base}" class="send">
            ${csrfField(session)}
            ${
              current
                ? html`<input
                    type="hidden"
                    name="conversation"
                    value="${current.conversation.id}"
                  />`
                : html`<label
                    >Audience
                    <select name="audience">
                      <option value="direct">direct</option>
                      <option value="shared">shared</option>
                    </select></label
                  >`
            }
            <textarea name="body" rows="3" required placeholder="Message ${agent.name}">
${sticky(session, 'body', '')}</textarea>
            ${
              following
                ? html`<button disabled data-busy-while="${following.id}">Send</button>
                    <span class="muted" data-busy-note="${following.id}"
                      >${agent.name} is working on the last message…</span
                    >`
                : html`<button>Send</button>`
            }
          </form>
        </section>
      </div>`,
    following !== undefined,
  );
}

/** One message of the open conversation: who and when, its run, and a question it asked. */
function messageItem(
  session: PageSession,
  agent: AgentRecord,
  m: MessageRecord,
  {
    run,
    question,
    note,
    back,
  }: {
    readonly run: RunRecord | undefined;
    readonly question: QuestionRecord | undefined;
    /** A progress note a run posted while it went on. */
    readonly note: boolean;
    /** Where answering the question comes back to. */
    readonly back: string;
  },
): Html {
  return html`<li class="message ${m.direction}${note ? ' progress' : ''}" data-message="${m.id}">
    <div class="meta">
      ${note ? 'progress · ' : ''}${m.direction === 'inbound' ? m.actor : agent.name}${
        m.relayedBy ? ` (relayed by ${m.relayedBy})` : ''
      }
      ·
      ${time(m.createdAt)}${
        run
          ? html` ·
              <a
                href="/runs/${run.id}"
                class="run-link"
                data-run-status="${run.id}"
                data-prefix="run "
                >run ${run.status}</a
              >`
          : ''
      }
    </div>
    <div class="body">${m.body}</div>
    ${
      run?.status === 'failed'
        ? html`<p class="run-error" role="alert">
            The turn failed: ${run.reason ?? 'no reason recorded'}
          </p>`
        : ''
    }
    ${question ? questionPanel(session, question, back) : ''}
  </li>`;
}
