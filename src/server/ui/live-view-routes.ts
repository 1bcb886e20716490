import { screenInputFrom } from '../../app/backends/browser-live-view.ts';
import { runQuestions } from '../../app/runs/reads.ts';
import type { BrowserSessionRecord, ChangeWatch, QuestionRecord } from '../../app/records.ts';
import { isUuid } from '../ids.ts';
import { MeshError } from '../../tool/errors.ts';
import { eventStream, type EventOut } from '../run-events.ts';
import { html } from './html.ts';
import { csrfField, layout, type PageSession } from './layout.ts';
import type { UiRoute } from './ui-route.ts';

/** How often the screen stream looks at the session's row (its state: handed over, ended). */
const STATE_POLL_MS = 1_000;

function sessionId(params: Readonly<Record<string, string>>): string {
  const id = params['session'] ?? '';
  if (!isUuid(id))
    throw new MeshError('browser_session_not_found', 'no browser session with that id');
  return id;
}

/** What a person may do in the session now, as the page says it. */
function stateText(state: string): string {
  if (state === 'awaiting_human')
    return 'The agent handed its browser to this conversation: you may act in it, then hand it back.';
  if (state === 'ready') return 'Watching: the agent has the browser.';
  return 'The session ended.';
}

/**
 * Mesh's own Live View page of a session: its screen, drawn from the screencast stream, taking a
 * person's clicks, keys and scrolls while the run has handed the browser over; and the hand-back
 * form of the run's open handoff. The page's script sends input as small form posts with the
 * session's CSRF token; what is typed goes to the page alone.
 */
function liveViewPage(
  session: PageSession,
  browser: BrowserSessionRecord,
  handoff: QuestionRecord | undefined,
): string {
  const base = `/browser-sessions/${browser.id}`;
  return layout(
    'Live View',
    session,
    html`<h1>Live View</h1>
      <p class="muted">
        Browser session ${browser.id.slice(0, 8)} of
        <a href="/runs/${browser.runId}">run ${browser.runId.slice(0, 8)}</a>.
      </p>
      <p class="live-state" data-live-state>${stateText(browser.state)}</p>
      <canvas
        class="live-view"
        tabindex="0"
        width="1280"
        height="800"
        data-live-view="${base}"
        data-csrf="${session.csrf}"
        aria-label="The browser's screen: click it to act, then type"
      ></canvas>
      ${
        handoff
          ? html`<form method="post" action="/runs/${browser.runId}/answer" class="handback stack">
              ${csrfField(session)}
              <input type="hidden" name="back" value="${base}/live" />
              <input type="hidden" name="handback" value="1" />
              <p>${handoff.question}</p>
              <label
                >What you did (optional; never a password)
                <input name="body" placeholder="Logged in" />
              </label>
              <button>Hand back</button>
            </form>`
          : ''
      }`,
    true,
  );
}

/** A wait that ends at the next frame (or after `ms`): the stream's change watch. */
function frameWatch(): { watch: () => ChangeWatch; wake: () => void } {
  let wake: (() => void) | undefined;
  return {
    wake: () => wake?.(),
    watch: () => ({
      wait: (ms, signal) =>
        new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, ms);
          signal?.addEventListener('abort', done, { once: true });
          wake = done;
        }),
      stop: () => wake?.(),
    }),
  };
}

export const liveViewRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/browser-sessions/{session}/live',
    handle: async ({ mesh, params, session }) => {
      const browser = await mesh.liveViews.session(sessionId(params), session.actor);
      const handoff = (await runQuestions(mesh, browser.runId)).find(
        (q) => q.state === 'open' && q.kind === 'browser_handoff',
      );
      return { page: liveViewPage(session, browser, handoff) };
    },
  },
  {
    // The session's screen as server-sent events: `frame` {jpeg, width, height} as it changes,
    // `state` {state} when the session is handed over, back, or ends (the stream ends with it).
    method: 'GET',
    path: '/browser-sessions/{session}/screen',
    handle: async ({ mesh, params, session, streams }) => {
      const viewer = await mesh.liveViews.watch(sessionId(params), session.actor);
      const frames = frameWatch();
      let frame: { jpeg: string; width: number; height: number } | undefined;
      const stop = viewer.onFrame((f) => {
        frame = f;
        frames.wake();
      });
      const pump = async (out: EventOut) => {
        try {
          let state = viewer.session.state;
          let looked = Date.now();
          await out.send('state', { state, text: stateText(state) });
          while (!out.left) {
            if (frame) {
              const sent = frame;
              frame = undefined;
              await out.send('frame', sent);
            }
            if (Date.now() - looked >= STATE_POLL_MS || viewer.lost) {
              looked = Date.now();
              const now = (await mesh.liveViews.session(viewer.session.id, session.actor)).state;
              if (now !== state) {
                state = now;
                await out.send('state', { state, text: stateText(state) });
              }
              if (viewer.lost || state === 'released' || state === 'failed') return;
            }
            if (!(await out.idle())) return;
          }
        } finally {
          stop();
          await viewer.leave();
        }
      };
      return {
        response: eventStream(
          mesh,
          { slots: streams, holder: session.tokenId },
          STATE_POLL_MS,
          pump,
          frames.watch,
        ),
      };
    },
  },
  {
    // One input of a person's, relayed to the page while the run has handed its browser over.
    method: 'POST',
    path: '/browser-sessions/{session}/input',
    handle: async ({ mesh, params, session, form }) => {
      const id = sessionId(params);
      const event = screenInputFrom((name) => form.get(name));
      await mesh.liveViews.input(id, session.actor, event);
      return { response: new Response(null, { status: 204 }) };
    },
  },
];
