import type { RunStore } from '../run/run-store.ts';
import type { ConversationRecord } from '../run/records.ts';
import { getConversation, insertConversation, insertMessage } from './conversations.ts';
import type { Db } from './db.ts';
import { appendReply, appendStep, appendSteps } from './step-append.ts';
import {
  claimRunnable,
  announceRunEnded,
  finishRun,
  getRun,
  insertRun,
  releaseLease,
  renewLease,
  updateProgress,
} from './runs.ts';
import { getArtifact } from './artifacts.ts';
import { writeDraft } from './run-drafts.ts';
import { listSteps } from './run-reads.ts';
import { settleDelivered } from './outbound-events.ts';
import { answerQuestion, expireQuestion, parkRun } from './questions.ts';

/** The run layer's {@link RunStore}, on a database. */
export function runStore(db: Db): RunStore {
  return {
    insertRun: (run) => insertRun(db, run),
    getRun: (id) => getRun(db, id),
    listSteps: (runId) => listSteps(db, runId),
    claimRunnable: (owner, leaseMs) => claimRunnable(db, owner, leaseMs),
    renewLease: (lease, leaseMs) => renewLease(db.leases ?? db, lease, leaseMs),
    releaseLease: (lease) => releaseLease(db.leases ?? db, lease),
    appendStep: (lease, step, usage) => appendStep(db, lease, step, usage),
    appendSteps: (lease, batch) =>
      batch.steps.some((w) => (w.artifacts ?? []).length > 0)
        ? db.transaction((tx) => appendSteps(tx, lease, batch))
        : appendSteps(db, lease, batch),
    settleDelivered: (effects) => settleDelivered(db, effects),
    getArtifact: async (runId, id) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
        return undefined;
      const found = await getArtifact(db, id);
      return found && found.runId === runId ? found : undefined;
    },
    updateProgress: (lease, progress) => updateProgress(db, lease, progress),
    writeDraft: (lease, draft) => writeDraft(db, lease, draft),
    async finishRun(lease, status, reason) {
      const held = await finishRun(db, lease, status, reason);
      // On the lease lane, and not awaited: the end is recorded; the announcement is a courtesy.
      if (db.kind === 'postgres')
        void announceRunEnded(db.leases ?? db, lease.runId).catch(() => undefined);
      return held;
    },
    receiveInbound: (input) =>
      db.transaction(async (tx) => {
        let conversation: ConversationRecord;
        if (input.conversation.kind === 'existing') {
          const found = await getConversation(tx, input.conversation.id);
          if (!found || found.agentId !== input.agentId) return undefined;
          conversation = found;
        } else {
          conversation = await insertConversation(tx, {
            id: input.conversation.id,
            agentId: input.agentId,
            audience: input.conversation.audience,
          });
        }
        const message = await insertMessage(tx, {
          ...input.message,
          conversationId: conversation.id,
          direction: 'inbound',
        });
        const run = await insertRun(tx, input.run(conversation, message));
        return { conversation, message, run };
      }),
    async parkRun(lease, park) {
      const parked = await parkRun(db, lease, park);
      // Waiters in other processes (a chat following its run) see it settle.
      if (db.kind === 'postgres')
        void announceRunEnded(db.leases ?? db, lease.runId).catch(() => undefined);
      return parked;
    },
    answerQuestion: (answer) => answerQuestion(db, answer),
    async expireQuestion(expiry) {
      const expired = await expireQuestion(db, expiry);
      if (expired && db.kind === 'postgres')
        void announceRunEnded(db.leases ?? db, expiry.runId).catch(() => undefined);
      return expired;
    },
    recordReply: (lease, reply) => appendReply(db, lease, reply),
  };
}
