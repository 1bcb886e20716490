import { setTimeout as sleep } from 'node:timers/promises';
import { SSEStreamingApi } from 'hono/streaming';
import type { Mesh } from '../app/mesh.ts';
import { listStepsAfter } from '../app/queries.ts';
import type { RunRecord, RunStatus, StepRecord } from '../app/records.ts';
import { stepJson } from '../app/views.ts';
import { HttpError } from './http-error.ts';

/*
 * A run's live events as a server-sent event stream, read from the database rather than from
 * this process's memory: the worker driving the run may be another replica, so the rows are the
 * only place every server sees the same run (docs/decisions/0026-live-run-events.md).
 */

/** How often an open stream reads the run again. */
export const POLL_MS = 250;
/** How long a stream with nothing to say waits before a comment keeps the connection alive. */
export const HEARTBEAT_MS = 15_000;
/** How long one stream lasts; the client resumes with `Last-Event-ID` (EventSource does). */
export const MAX_STREAM_MS = 10 * 60_000;
/** How many streams one server holds open at once. */
export const MAX_STREAMS = 64;
/** How long a browser waits before it reconnects a dropped stream. */
const RETRY_MS = 1000;

/** A run nobody is working on any more: its stream ends (and says so) when it gets there. */
const LIVE_STATUSES: readonly RunStatus[] = ['queued', 'running'];

/** The streams one server holds open, bounded so idle readers cannot take every connection. */
export class StreamSlots {
  private held = 0;
  constructor(readonly limit = MAX_STREAMS) {}

  /** How many streams are open now. */
  get open(): number {
    return this.held;
  }

  /** Takes a slot, or refuses 429 when all are held; the returned function gives it back once. */
  take(): () => void {
    if (this.held >= this.limit)
      throw new HttpError(
        429,
        'too_many_streams',
        `this server already holds ${this.limit} live event streams; try again shortly`,
        { 'retry-after': '5' },
      );
    this.held += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held -= 1;
    };
  }
}

const SEQ = /^\d{1,9}$/;

/**
 * The step number a stream resumes after: the `Last-Event-ID` header a reconnecting client
 * sends, else `?after=`, else 0 (from the start). Anything else is refused, naming where it came
 * from, before any stream opens.
 */
export function resumeAfter(query: URLSearchParams, lastEventId: string | undefined): number {
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    if (!SEQ.test(lastEventId.trim()))
      throw new HttpError(
        400,
        'invalid_header',
        'Last-Event-ID must be the seq of a step this stream sent (a whole number)',
        {},
        { field: 'header.last-event-id' },
      );
    return Number(lastEventId.trim());
  }
  const after = query.get('after');
  if (after === null) return 0;
  if (!SEQ.test(after))
    throw new HttpError(
      400,
      'invalid_query',
      'after must be a whole number (the seq of the last step seen)',
      {},
      { field: 'query.after' },
    );
  return Number(after);
}

/** How one stream runs. */
export interface RunEventOptions {
  readonly slots: StreamSlots;
  /** The seq of the last step the client has; only later steps are sent. */
  readonly after: number;
  /** Markup of a step for the web UI, sent beside its JSON as `html`. */
  readonly render?: (step: StepRecord) => string;
  readonly pollMs?: number;
}

function stateJson(run: RunRecord, final: boolean): Record<string, unknown> {
  return {
    run_id: run.id,
    status: run.status,
    reason: run.reason,
    usage: run.usage,
    committed_at: run.committedAt,
    finished_at: run.finishedAt,
    final,
  };
}

/**
 * The event stream of a run: every step after `after` (`event: step`, `id: <seq>`, the step as
 * the run API shows it), a `reply` event beside a reply step (same id), `progress` when the run's
 * usage changes, `state` when its status does, and a final `state` (`final: true`) once the run
 * is no longer queued or running, after which the stream ends. A slot is taken before the
 * stream opens (refused 429 past the limit) and given back when it ends or the client leaves.
 */
export function runEventStream(mesh: Mesh, run: RunRecord, options: RunEventOptions): Response {
  const release = options.slots.take();
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const stream = new SSEStreamingApi(writable, readable);
  const left = new AbortController();
  // A client that left gives its slot back at once, not at the stream's next poll.
  stream.onAbort(() => {
    left.abort();
    release();
  });
  const pollMs = options.pollMs ?? POLL_MS;

  const send = async (event: string, data: unknown, id?: number) => {
    await stream.writeSSE({
      event,
      data: JSON.stringify(data),
      ...(id === undefined ? {} : { id: String(id) }),
    });
  };

  const pump = async () => {
    const started = mesh.clock.now().getTime();
    let last = options.after;
    let quietSince = started;
    let current = run;
    await stream.writeSSE({
      event: 'state',
      data: JSON.stringify(stateJson(run, false)),
      retry: RETRY_MS,
    });
    let usage = JSON.stringify(run.usage);
    for (;;) {
      // The run is read before its steps: a run seen ended has written every step it will.
      const fresh = await mesh.ledger.run(run.id);
      if (!fresh || left.signal.aborted) return;
      const steps = await listStepsAfter(mesh, run.id, last);
      for (const step of steps) {
        await send(
          'step',
          options.render ? { ...stepJson(step), html: options.render(step) } : stepJson(step),
          step.seq,
        );
        if (step.kind === 'reply')
          await send(
            'reply',
            {
              run_id: run.id,
              seq: step.seq,
              message_id: step.data.messageId,
              body: step.data.body,
            },
            step.seq,
          );
        last = step.seq;
      }
      const now = mesh.clock.now().getTime();
      if (steps.length > 0) quietSince = now;
      if (JSON.stringify(fresh.usage) !== usage) {
        usage = JSON.stringify(fresh.usage);
        await send('progress', { run_id: run.id, usage: fresh.usage });
        quietSince = now;
      }
      const ended = !LIVE_STATUSES.includes(fresh.status);
      if (ended || fresh.status !== current.status || fresh.reason !== current.reason) {
        await send('state', stateJson(fresh, ended));
        quietSince = now;
      }
      current = fresh;
      if (ended || now - started >= MAX_STREAM_MS) return;
      if (now - quietSince >= HEARTBEAT_MS) {
        await stream.write(': keep-alive\n\n');
        quietSince = now;
      }
      try {
        await sleep(pollMs, undefined, { signal: left.signal });
      } catch {
        return;
      }
    }
  };

  void pump()
    .catch(async () => {
      // A failed read ends the stream; the client resumes from the last id it got.
      await send('error', { code: 'internal_error', message: 'the stream failed; reconnect' });
    })
    .finally(async () => {
      release();
      await stream.close();
    });

  return new Response(stream.responseReadable, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    },
  });
}
