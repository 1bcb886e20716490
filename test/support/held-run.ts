import { randomUUID } from 'node:crypto';
import type { RunLedger } from '../../src/run/ledger.ts';
import type { Lease } from '../../src/run/records.ts';

/**
 * A message and its turn run, written through `ledger` and leased to `owner` rather than queued:
 * the test is the run's worker, writing its steps and ending it when it chooses. A new
 * conversation unless `conversationId` names one.
 */
export async function heldRun(
  ledger: RunLedger,
  agentId: string,
  options: { readonly owner: string; readonly conversationId?: string; readonly body?: string },
): Promise<{ lease: Lease; conversationId: string }> {
  const written = await ledger.receiveInbound({
    agentId,
    conversation: options.conversationId
      ? { kind: 'existing', id: options.conversationId }
      : { kind: 'new', id: randomUUID(), audience: 'direct' },
    message: { id: randomUUID(), actor: 'operator:test', body: options.body ?? 'hello' },
    run: (conversation, message) => ({
      id: randomUUID(),
      agentId,
      conversationId: conversation.id,
      inboundMessageId: message.id,
      kind: 'turn',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      lease: { owner: options.owner, leaseMs: 60_000 },
    }),
  });
  if (!written) throw new Error('the inbound message was not written');
  return {
    lease: { runId: written.run.id, owner: options.owner, epoch: written.run.leaseEpoch },
    conversationId: written.conversation.id,
  };
}
