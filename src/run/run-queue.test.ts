import { describe, expect, it } from 'vitest';
import type { RunRecord, RunStatus } from './records.ts';
import { runRecord } from '../../test/support/records.ts';
import { RunQueue } from './run-queue.ts';

const row = (status: RunStatus): RunRecord => runRecord({ id: 'r1', status });

/** A run whose status the test sets, a count of how often it was read, and a wait on that count. */
function fakeRun(status: RunStatus) {
  const state = { status, reads: 0 };
  const waiters: { n: number; resolve: () => void }[] = [];
  const read = (id: string) => {
    state.reads++;
    for (const w of waiters.filter((w) => state.reads >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    return Promise.resolve(id === 'r1' ? row(state.status) : undefined);
  };
  /** Resolves once the run has been read `n` times. */
  const reads = (n: number) =>
    state.reads >= n
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiters.push({ n, resolve }));
  return { state, read, reads };
}

describe('RunQueue.settled', () => {
  it('answers a run that ended in this process as soon as it ends, not at the next read', async () => {
    const { state, read } = fakeRun('running');
    // A poll far longer than the test: only the ended() signal can settle it in time.
    const queue = new RunQueue(read, 3_600_000);
    const waiting = queue.settled('r1', Number.POSITIVE_INFINITY);
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.reads).toBe(1);
    state.status = 'succeeded';
    queue.ended('r1');
    expect((await waiting)?.status).toBe('succeeded');
    expect(state.reads).toBe(2);
  });

  it('sees a run settled elsewhere by reading it again', async () => {
    const { state, read, reads } = fakeRun('queued');
    const queue = new RunQueue(read, 1);
    const waiting = queue.settled('r1', Number.POSITIVE_INFINITY);
    await reads(3);
    state.status = 'failed';
    expect((await waiting)?.status).toBe('failed');
  });

  it('answers the row as it stands when the wait runs out or the caller leaves', async () => {
    const { read } = fakeRun('running');
    const queue = new RunQueue(read, 1);
    expect((await queue.settled('r1', 0))?.status).toBe('running');
    expect((await queue.settled('r1', 5))?.status).toBe('running');
    const leaving = new AbortController();
    const waiting = queue.settled('r1', Number.POSITIVE_INFINITY, leaving.signal);
    leaving.abort();
    expect((await waiting)?.status).toBe('running');
  });

  it('counts a run parked for input as settled, and an unknown id as none', async () => {
    expect((await new RunQueue(fakeRun('awaiting_input').read).settled('r1', 1000))?.status).toBe(
      'awaiting_input',
    );
    expect(await new RunQueue(fakeRun('queued').read).settled('nope', 1000)).toBeUndefined();
  });
});
