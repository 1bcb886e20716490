import { randomUUID } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import { insertProgressNote } from '../../store/progress-notes.ts';

/**
 * Tells the run's conversation where its browser can be watched, as a progress note the moment
 * the session is ready (not only when a person is asked to take it over): once per session, and
 * outside the run's own note limits, which are the model's. A run with no conversation (an
 * operator's call) gets none; a note that cannot be written never costs the session.
 */
export async function postLiveViewNote(
  db: Db,
  runId: string,
  sessionId: string,
  link: string,
): Promise<void> {
  await insertProgressNote(
    db,
    {
      messageId: randomUUID(),
      runId,
      callId: `browser-session:${sessionId}`,
      body: `My browser session has started; watch it live: ${link}`,
      link,
    },
    { perRun: Number.MAX_SAFE_INTEGER, minIntervalMs: 0 },
  ).catch(() => undefined);
}
