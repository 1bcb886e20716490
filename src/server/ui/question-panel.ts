import type { QuestionRecord } from '../../app/records.ts';
import { html, type Html } from './html.ts';
import { csrfField, time, type PageSession } from './layout.ts';

/**
 * A question a run asked its conversation, as the chat and run pages show it: while it is open,
 * the form anyone in the conversation answers with (a button per choice, or their own words);
 * once settled, who answered or that it expired.
 */
export function questionPanel(
  session: PageSession,
  question: QuestionRecord,
  /** The page the answer returns to. */
  back: string,
): Html {
  const run = question.runId;
  if (question.kind === 'browser_handoff') return handoffPanel(session, question, back);
  if (question.state === 'answered')
    return html`<div class="question answered" data-question="${run}">
      <span class="muted"
        >Answered by
        ${question.answeredBy ?? 'someone'}${question.settledAt ? html` · ${time(question.settledAt)}` : ''};
        the run went on.</span
      >
    </div>`;
  if (question.state === 'expired')
    return html`<div class="question expired" data-question="${run}">
      <span class="muted"
        >No one answered before ${time(question.expiresAt)}; the question expired and the run
        ended.</span
      >
    </div>`;
  return html`<form
    method="post"
    action="/runs/${run}/answer"
    class="question open stack"
    data-question="${run}"
  >
    ${csrfField(session)}
    <input type="hidden" name="back" value="${back}" />
    <p class="muted">
      The <a href="/runs/${run}">run</a> waits for an answer until ${time(question.expiresAt)}.
      Anyone in this conversation may answer.
    </p>
    ${
      question.choices.length > 0
        ? html`<div class="choices">
            ${question.choices.map(
              (c) => html`<button name="choice" value="${c}" class="choice">${c}</button> `,
            )}
          </div>`
        : ''
    }
    <label
      >Your answer <textarea name="body" rows="2" placeholder="Answer in your own words"></textarea>
    </label>
    <button>Answer</button>
  </form>`;
}

/** A Live View link: Mesh's own page, or a vendor's (opened apart from Mesh's pages). */
function liveViewLink(link: string | null): Html | '' {
  if (link === null) return '';
  return link.startsWith('/')
    ? html`<a href="${link}" class="live-view-link">Open Live View</a>`
    : html`<a href="${link}" class="live-view-link" target="_blank" rel="noopener noreferrer"
        >Open Live View</a
      >`;
}

/**
 * A run's browser handoff: while open, the Live View link anyone in the conversation takes the
 * browser over through, and the hand-back; once settled, who handed it back, or that no one did.
 */
function handoffPanel(session: PageSession, question: QuestionRecord, back: string): Html {
  const run = question.runId;
  if (question.state === 'answered')
    return html`<div class="question answered" data-question="${run}">
      <span class="muted"
        >Browser handed back by
        ${question.answeredBy ?? 'someone'}${question.settledAt ? html` · ${time(question.settledAt)}` : ''};
        the run went on.</span
      >
    </div>`;
  if (question.state === 'expired')
    return html`<div class="question expired" data-question="${run}">
      <span class="muted"
        >No one handed the browser back before ${time(question.expiresAt)}; the run ended.</span
      >
    </div>`;
  return html`<form
    method="post"
    action="/runs/${run}/answer"
    class="question open handoff stack"
    data-question="${run}"
  >
    ${csrfField(session)}
    <input type="hidden" name="back" value="${back}" />
    <input type="hidden" name="handback" value="1" />
    <p class="muted">
      The <a href="/runs/${run}">run</a> waits until ${time(question.expiresAt)} for someone in this
      conversation to take its browser over and hand it back. ${liveViewLink(question.link)}
    </p>
    <label
      >What you did (optional; never a password)
      <input name="body" placeholder="Logged in" />
    </label>
    <button>Hand back</button>
  </form>`;
}
