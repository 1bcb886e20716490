import type { Lease } from './records.ts';
import type { RunStore } from './run-store.ts';

/** `store` with every write to a run announced to `changed` once it has committed. */
export function announcingWrites(store: RunStore, changed: (runId: string) => void): RunStore {
  const after =
    <A extends [Lease, ...unknown[]], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await write(...args);
      changed(args[0].runId);
      return result;
    };
  return {
    ...store,
    appendStep: after(store.appendStep.bind(store)),
    appendSteps: after(store.appendSteps.bind(store)),
    updateProgress: after(store.updateProgress.bind(store)),
    recordReply: after(store.recordReply.bind(store)),
    finishRun: after(store.finishRun.bind(store)),
    parkRun: after(store.parkRun.bind(store)),
    async writeDraft(lease, draft) {
      const written = await store.writeDraft(lease, draft);
      if (written) changed(lease.runId);
      return written;
    },
    async answerQuestion(answer) {
      const answered = await store.answerQuestion(answer);
      if (answered.kind === 'answered') changed(answer.runId);
      return answered;
    },
    async expireQuestion(expiry) {
      const expired = await store.expireQuestion(expiry);
      if (expired) changed(expiry.runId);
      return expired;
    },
  };
}
