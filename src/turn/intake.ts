import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../model/json.ts';
import type { Audience } from '../policy/audience.ts';
import { DEFAULT_BUDGET, type Budget } from '../run/budget.ts';
import type { RunLedger } from '../run/ledger.ts';
import type { ConversationRecord, MessageRecord, RunRecord } from '../run/records.ts';
import { MeshError } from '../tool/errors.ts';

/** A message arriving for an agent. */
export interface InboundMessage {
  readonly agentId: string;
  /** Continue this conversation; omitted starts a new one with `audience`. */
  readonly conversationId?: string;
  readonly audience?: Audience;
  readonly actor: string;
  /** The credential's actor, when a relay token posts for `actor` (recorded beside it). */
  readonly relayedBy?: string;
  readonly body: string;
  /**
   * The message's id when the caller fixed it beforehand (a commitment's reminder), so a caller
   * that stopped half way and tries again can never post it twice: the second insert is refused.
   */
  readonly messageId?: string;
  readonly budget?: Partial<Budget>;
  /** Run the turn under the caller's lease instead of queueing it for a worker. */
  readonly lease?: { readonly owner: string; readonly leaseMs: number };
}

/**
 * Persists an inbound message first — with its actor, in its conversation and audience — and
 * creates its run in the same transaction, so no message is ever without its turn and no turn
 * without its message. The run's provenance is that message: memory written in the turn points
 * at it.
 */
export async function receiveMessage(
  ledger: RunLedger,
  input: InboundMessage,
): Promise<{ conversation: ConversationRecord; message: MessageRecord; run: RunRecord }> {
  if (input.body.trim() === '') throw new MeshError('empty_message', 'a message needs a body');
  if (input.actor.trim() === '') throw new MeshError('missing_actor', 'a message needs an actor');
  const received = await ledger.receiveInbound({
    agentId: input.agentId,
    conversation: input.conversationId
      ? { kind: 'existing', id: input.conversationId }
      : { kind: 'new', id: randomUUID(), audience: input.audience ?? 'direct' },
    message: {
      id: input.messageId ?? randomUUID(),
      actor: input.actor,
      body: input.body,
      ...(input.relayedBy ? { relayedBy: input.relayedBy } : {}),
    },
    run: (conversation, message) => {
      const provenance: JsonObject = {
        kind: 'inbound_message',
        messageId: message.id,
        actor: input.actor,
        ...(input.relayedBy ? { relayedBy: input.relayedBy } : {}),
      };
      return {
        id: randomUUID(),
        agentId: input.agentId,
        conversationId: conversation.id,
        inboundMessageId: message.id,
        kind: 'turn',
        provenance,
        budget: { ...DEFAULT_BUDGET, ...input.budget },
        checkpoint: { kind: 'turn' },
        ...(input.lease ? { lease: input.lease } : {}),
      };
    },
  });
  if (!received)
    throw new MeshError('conversation_not_found', 'no conversation with that id for this agent');
  return received;
}
