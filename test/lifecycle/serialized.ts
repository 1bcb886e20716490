import { expect } from 'vitest';
import type { TransitionRecord } from '../../src/lifecycle/records.ts';

/** Transitions one after another: contiguous seqs, each from where the last one ended. */
export function expectSerialized(history: readonly TransitionRecord[]): void {
  let state = 'disabled';
  history.forEach((t, i) => {
    expect(t.seq).toBe(i + 1);
    expect(t.fromState).toBe(state);
    expect(t.outcome).not.toBe('running');
    state = t.outcome === 'succeeded' ? t.toState : 'error';
    const next = history[i + 1];
    if (next && t.finishedAt)
      expect(next.createdAt.getTime()).toBeGreaterThanOrEqual(t.finishedAt.getTime());
  });
}
