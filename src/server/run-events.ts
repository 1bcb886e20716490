import { setTimeout as sleep } from 'node:timers/promises';
import { SSEStreamingApi } from 'hono/streaming';
import type { Mesh } from '../app/mesh.ts';
import { listConversationRuns, listStepsAfter } from '../app/runs/reads.ts';
import type {
  ChangeWatch,
  OutboundEventRecord,
  RunRecord,
  RunStatus,
  StepRecord,
} from '../app/records.ts';
import { browserSessionJson, effectJson, stepJson } from '../app/views.ts';
import { HttpError } from './http-error.ts';
import { UUID_SOURCE } from './ids.ts';
import {
  browserFollower,
  DraftFollower,
  effectFollower,
  noteFollower,
} from './run-event-followers.ts';
import type { StreamSlots } from './stream-slots.ts';

export { MAX_STREAMS, MAX_STREAMS_PER_TOKEN, StreamSlots } from './stream-slots.ts';

/*
 * A run's live events as a server-sent event stream, read from the database rather than from
 * this process's memory: the worker driving the run may be another replica, so the rows are the
 * only place every server sees the same run (docs/decisions/0026-live-run-events.md).
 */

/** How often an open stream reads the run again. */
export const POLL_MS = 250;
/** A run's browser sessions and outbound events are read at least every this many polls. */
const EXTRAS_EVERY = 4;
/** How long a stream with nothing to say waits before a comment keeps the connection alive. */
export const HEARTBEAT_MS = 15_000;
/** How long one stream lasts; the client resumes with `Last-Event-ID` (EventSource does). */
export const MAX_STREAM_MS = 10 * 60_000;
/** How long a browser waits before it reconnects a dropped stream. */
const RETRY_MS = 1000;

/** A run nobody is working on any more: its stream ends (and says so) when it gets there. */
const LIVE_STATUSES: readonly RunStatus[] = ['queued', 'running'];

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
  /** Who holds the stream's slot: the operator token's id. */
  readonly holder: string;
  /** The seq of the last step the client has; only later steps are sent. */
  readonly after: number;
  /** Markup of a step for the web UI, sent beside its JSON as `html`. */
  readonly render?: (step: StepRecord) => string;
  /** Markup of an outbound event's row for the web UI, sent beside its JSON as `html`. */
  readonly renderEffect?: (effect: OutboundEventRecord) => string;
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

/** What a stream's pump writes through. */
export interface EventOut {
  send(event: string, data: unknown, id?: string): Promise<void>;
  /**
   * Waits one poll (writing a keep-alive comment first when the stream was quiet too long);
   * false when the client left or the stream has lasted its time.
   */
  idle(): Promise<boolean>;
  /** Whether the client left. */
  readonly left: boolean;
}

/**
 * A server-sent event response whose events `pump` writes. A slot is taken before the stream
 * opens (refused 429 past the limit) and given back when the pump ends or the client leaves.
 */
export function eventStream(
  mesh: Mesh,
  slot: { readonly slots: StreamSlots; readonly holder: string },
  pollMs: number,
  pump: (out: EventOut) => Promise<void>,
  /**
   * Starts watching the stream's subject for a change made here (else the poll is a sleep): taken
   * before each read, so a change made while the pump reads wakes the next wait at once.
   */
  watch?: () => ChangeWatch,
): Response {
  const release = slot.slots.take(slot.holder);
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const stream = new SSEStreamingApi(writable, readable);
  const left = new AbortController();
  // A client that left gives its slot back at once, not at the stream's next poll.
  stream.onAbort(() => {
    left.abort();
    release();
  });
  const now = () => mesh.clock.now().getTime();
  const started = now();
  let lastWrite = started;
  let first = true;
  let change = watch?.();
  const out: EventOut = {
    async send(event, data, id) {
      await stream.writeSSE({
        event,
        data: JSON.stringify(data),
        ...(id === undefined ? {} : { id }),
        ...(first ? { retry: RETRY_MS } : {}),
      });
      first = false;
      lastWrite = now();
    },
    async idle() {
      if (left.signal.aborted || now() - started >= MAX_STREAM_MS) return false;
      if (now() - lastWrite >= HEARTBEAT_MS) {
        await stream.write(': keep-alive\n\n');
        lastWrite = now();
      }
      if (change && watch) {
        // A write this process makes to the run wakes the stream at once; one made by another
        // replica is seen at the next read, `pollMs` later.
        await change.wait(pollMs, left.signal);
        change = watch();
        return !left.signal.aborted;
      }
      try {
        await sleep(pollMs, undefined, { signal: left.signal });
        return true;
      } catch {
        return false;
      }
    },
    get left() {
      return left.signal.aborted;
    },
  };
  void pump(out)
    .catch(async () => {
      // A failed read ends the stream; the client resumes from the last id it got.
      await out.send('error', { code: 'internal_error', message: 'the stream failed; reconnect' });
    })
    .finally(async () => {
      change?.stop();
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

function isLiveStatus(status: RunStatus): boolean {
  return LIVE_STATUSES.includes(status);
}

/**
 * The event stream of a run: every step after `after` (`event: step`, `id: <seq>`, the step as
 * the run API shows it), a `reply` event beside a reply step (same id), `note` for each progress
 * note the run posted to its conversation, `progress` when the run's usage changes, `state` when its status does, and a final `state` (`final: true`) once the run
 * is no longer queued or running, after which the stream ends.
 */
export function runEventStream(mesh: Mesh, run: RunRecord, options: RunEventOptions): Response {
  return eventStream(
    mesh,
    options,
    options.pollMs ?? POLL_MS,
    async (out) => {
      let last = options.after;
      let current = run;
      let usage = JSON.stringify(run.usage);
      const draft = new DraftFollower(run.id);
      const effects = effectFollower(mesh, run.id);
      const browsers = browserFollower(mesh, run.id);
      const notes = noteFollower(mesh, run.id);
      await out.send('state', stateJson(run, false));
      let tick = 0;
      do {
        // The run is read before its steps: a run seen ended has written every step it will.
        const fresh = await mesh.ledger.run(run.id);
        if (!fresh || out.left) return;
        const steps = await listStepsAfter(mesh, run.id, last);
        for (const step of steps) {
          const json = stepJson(step);
          await out.send(
            'step',
            options.render ? { ...json, html: options.render(step) } : json,
            String(step.seq),
          );
          if (step.kind === 'reply') await out.send('reply', replyJson(step), String(step.seq));
          draft.saw(step);
          last = step.seq;
        }
        const delta = await draft.next(mesh, fresh);
        if (delta) await out.send('delta', delta);
        const ended = !isLiveStatus(fresh.status);
        // Sessions and deliveries change beside the steps: read on a tick that brought steps or a
        // change of the run, at its end, and at least every EXTRAS_EVERY ticks otherwise.
        const moved =
          steps.length > 0 ||
          JSON.stringify(fresh.usage) !== usage ||
          fresh.status !== current.status;
        if (moved || ended || tick % EXTRAS_EVERY === 0) {
          for (const session of await browsers.changed())
            await out.send('browser', { run_id: run.id, ...browserSessionJson(session) });
          for (const note of await notes.changed())
            await out.send('note', {
              run_id: run.id,
              message_id: note.id,
              body: note.body,
              link: note.link,
              created_at: note.createdAt.toISOString(),
            });
          for (const effect of await effects.changed()) {
            const json = { run_id: run.id, ...effectJson(effect) };
            await out.send(
              'effect',
              options.renderEffect ? { ...json, html: options.renderEffect(effect) } : json,
            );
          }
        }
        tick++;
        if (JSON.stringify(fresh.usage) !== usage) {
          usage = JSON.stringify(fresh.usage);
          await out.send('progress', { run_id: run.id, usage: fresh.usage });
        }
        if (ended || fresh.status !== current.status || fresh.reason !== current.reason)
          await out.send('state', stateJson(fresh, ended));
        current = fresh;
        if (ended) return;
      } while (await out.idle());
    },
    () => mesh.runs.watch(run.id),
  );
}

function replyJson(step: Extract<StepRecord, { kind: 'reply' }>): Record<string, unknown> {
  return {
    run_id: step.runId,
    seq: step.seq,
    message_id: step.data.messageId,
    body: step.data.body,
  };
}

/** Where a conversation's stream resumes: after step `seq` of run `runId`. */
export interface ConversationResume {
  readonly runId: string;
  readonly seq: number;
}

const CONVERSATION_ID = new RegExp(`^(${UUID_SOURCE}):(\\d{1,9})$`);

/**
 * The point a conversation's stream resumes after: `<run id>:<seq>` from `Last-Event-ID`, else
 * from `?after=`, else undefined (from its first run). Anything else is refused before a stream
 * opens.
 */
export function conversationResume(
  query: URLSearchParams,
  lastEventId: string | undefined,
): ConversationResume | undefined {
  const read = (text: string, field: string, code: 'invalid_header' | 'invalid_query') => {
    const m = CONVERSATION_ID.exec(text.trim());
    if (!m)
      throw new HttpError(
        code,
        `${field === 'header.last-event-id' ? 'Last-Event-ID' : 'after'} must be <run id>:<seq>, an id this stream sent`,
        {},
        { field },
      );
    return { runId: m[1] ?? '', seq: Number(m[2]) };
  };
  if (lastEventId !== undefined && lastEventId.trim() !== '')
    return read(lastEventId, 'header.last-event-id', 'invalid_header');
  const after = query.get('after');
  return after === null ? undefined : read(after, 'query.after', 'invalid_query');
}

/**
 * The event stream of a conversation: its runs in the order they were created, each with a
 * `state` event (first seen, on every change, `final: true` when it stops) and a `reply` event
 * (`id: <run id>:<seq>`) for each reply. Resuming after `<run>:<seq>` skips the runs before that
 * run and that run's steps up to `seq`. A conversation never ends, so the stream lasts until the
 * client leaves or its time is up.
 */
export function conversationEventStream(
  mesh: Mesh,
  conversationId: string,
  options: {
    slots: StreamSlots;
    holder: string;
    resume: ConversationResume | undefined;
    pollMs?: number;
  },
): Response {
  return eventStream(mesh, options, options.pollMs ?? POLL_MS, async (out) => {
    const seen = new Map<
      string,
      { last: number; shown?: RunRecord; ended: boolean; draft?: DraftFollower }
    >();
    let resume = options.resume;
    do {
      let runs = await listConversationRuns(mesh, conversationId);
      if (resume) {
        const from = runs.findIndex((r) => r.id === resume?.runId);
        // An id naming no run of this conversation replays it from the start.
        if (from >= 0) {
          for (const r of runs.slice(0, from)) seen.set(r.id, { last: 0, ended: true });
          seen.set(runs[from]?.id ?? '', { last: resume.seq, ended: false });
        }
        resume = undefined;
      }
      runs = runs.filter((r) => !seen.get(r.id)?.ended);
      for (const run of runs) {
        const tracked = seen.get(run.id) ?? { last: 0, ended: false };
        seen.set(run.id, tracked);
        const ended = !isLiveStatus(run.status);
        const shown = tracked.shown;
        if (!shown || shown.status !== run.status || shown.reason !== run.reason) {
          // The replies come after the state that says the run ended: steps are read after it.
          if (!ended) await out.send('state', stateJson(run, false));
        }
        tracked.draft ??= new DraftFollower(run.id);
        for (const step of await listStepsAfter(mesh, run.id, tracked.last)) {
          if (step.kind === 'reply')
            await out.send('reply', replyJson(step), `${run.id}:${step.seq}`);
          tracked.draft.saw(step);
          tracked.last = step.seq;
        }
        const delta = await tracked.draft.next(mesh, run);
        if (delta) await out.send('delta', delta);
        if (ended) await out.send('state', stateJson(run, true));
        tracked.shown = run;
        tracked.ended = ended;
        if (out.left) return;
      }
    } while (await out.idle());
  });
}
