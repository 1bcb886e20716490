import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../model/json.ts';
import { DEFAULT_BUDGET, type Budget } from '../run/budget.ts';
import type { RunLedger } from '../run/ledger.ts';
import {
  getConversation,
  insertConversation,
  insertMessage,
  type Audience,
  type ConversationRecord,
  type MessageRecord,
} from '../store/conversations.ts';
import type { RunRecord } from '../store/runs.ts';
import { MeshError } from '../tool/errors.ts';

/** A message arriving for an agent. */
export interface InboundMessage {
  readonly agentId: string;
  /** Continue this conversation; omitted starts a new one with `audience`. */
  readonly conversationId?: string;
  readonly audience?: Audience;
  readonly actor: string;
  readonly body: string;
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
  return ledger.db.transaction(async (tx) => {
    let conversation: ConversationRecord;
    if (input.conversationId) {
      const found = await getConversation(tx, input.conversationId);
      if (!found || found.agentId !== input.agentId) {
        throw new MeshError(
          'conversation_not_found',
          'no conversation with that id for this agent',
        );
      }
      conversation = found;
    } else {
      conversation = await insertConversation(tx, {
        id: randomUUID(),
        agentId: input.agentId,
        audience: input.audience ?? 'direct',
      });
    }
    const message = await insertMessage(tx, {
      id: randomUUID(),
      conversationId: conversation.id,
      direction: 'inbound',
      actor: input.actor,
      body: input.body,
    });
    const provenance: JsonObject = {
      kind: 'inbound_message',
      messageId: message.id,
      actor: input.actor,
    };
    const run = await ledger.createRun(
      {
        agentId: input.agentId,
        conversationId: conversation.id,
        inboundMessageId: message.id,
        kind: 'turn',
        provenance,
        budget: { ...DEFAULT_BUDGET, ...input.budget },
        checkpoint: { kind: 'turn' },
        ...(input.lease ? { lease: input.lease } : {}),
      },
      tx,
    );
    return { conversation, message, run };
  });
}
