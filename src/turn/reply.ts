import { randomUUID } from 'node:crypto';
import { insertMessage } from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import { appendStep, type Lease } from '../store/runs.ts';

/** Writes the reply as an outbound message and the run's reply step, together. */
export async function recordReply(
  db: Db,
  lease: Lease,
  conversationId: string,
  actor: string,
  body: string,
): Promise<string> {
  return db.transaction(async (tx) => {
    const message = await insertMessage(tx, {
      id: randomUUID(),
      conversationId,
      direction: 'outbound',
      actor,
      body,
    });
    await appendStep(tx, lease, {
      kind: 'reply',
      status: 'completed',
      finished: true,
      data: { messageId: message.id, body },
    });
    return message.id;
  });
}
