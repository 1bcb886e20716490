import { describe, expect, it, vi } from 'vitest';
import type { RunDraft } from '../run/records.ts';
import { replyDraft } from './reply-draft.ts';

/** A save that records what it was given and is settled by the test. */
function pacedSave(kept = true) {
  const saved: RunDraft[] = [];
  const pending: (() => void)[] = [];
  return {
    saved,
    settleAll: () => pending.splice(0).forEach((settle) => settle()),
    save: (draft: RunDraft) =>
      new Promise<boolean>((resolve) => {
        saved.push(draft);
        pending.push(() => resolve(kept));
      }),
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('replyDraft', () => {
  it('saves one text at a time, the latest winning, and never after close', async () => {
    const paced = pacedSave();
    const draft = replyDraft(2, paced.save, 0);
    draft.onText('', 1);
    expect(paced.saved).toEqual([]);
    draft.onText('a', 1);
    draft.onText('a b', 1);
    draft.onText('a b c', 1);
    // The first save is under way; the pieces meanwhile are not queued, only the latest kept.
    expect(paced.saved).toEqual([{ round: 2, attempt: 1, body: 'a' }]);
    paced.settleAll();
    await tick();
    expect(paced.saved.map((d) => d.body)).toEqual(['a', 'a b c']);
    draft.onText('a b c d', 1);
    const closing = draft.close();
    paced.settleAll();
    await closing;
    draft.onText('a b c d e', 1);
    await tick();
    expect(paced.saved.map((d) => d.body)).toEqual(['a', 'a b c']);
  });

  it('starts again on a retried attempt, and stops saving once the lease is gone', async () => {
    const paced = pacedSave(false);
    const draft = replyDraft(1, paced.save, 0);
    draft.onText('first', 1);
    draft.onText('', 2);
    paced.settleAll();
    await tick();
    // The save found the lease gone: nothing more is saved.
    draft.onText('second', 2);
    await tick();
    expect(paced.saved).toEqual([{ round: 1, attempt: 1, body: 'first' }]);
    await draft.close();
  });

  it('waits out its interval between saves, then saves the latest text', async () => {
    // The clock is the test's: the interval passes when the test says so, not after a sleep.
    vi.useFakeTimers();
    try {
      const paced = pacedSave();
      const draft = replyDraft(1, paced.save, 40);
      draft.onText('one', 1);
      paced.settleAll();
      await vi.advanceTimersByTimeAsync(0);
      draft.onText('one two', 1);
      await vi.advanceTimersByTimeAsync(39);
      expect(paced.saved).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(paced.saved.map((d) => d.body)).toEqual(['one', 'one two']);
      paced.settleAll();
      await draft.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
