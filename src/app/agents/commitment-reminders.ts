import { dueCommitments, markReminded } from '../../store/commitments.ts';
import { getMessage } from '../../store/conversations.ts';
import type { Commitment } from '../../../tools/agent/agent-services.ts';
import { sendMessage } from '../conversations/turns.ts';
import type { Mesh } from '../mesh.ts';
import { commitmentOf } from './commitments.ts';

/** How many due commitments one sweep reminds at most (the next sweep takes the rest). */
const SWEEP_LIMIT = 50;

/** The reminder a due commitment posts to its conversation: what the turn it starts reads. */
export function reminderBody(c: Commitment): string {
  return [
    `Reminder: you committed to this, due ${c.due ?? 'now'}: ${c.text}`,
    `Do it now, and fulfil commitment ${c.id} with a note on what was done (or say why it cannot be done).`,
  ].join('\n');
}

/**
 * Reminds the agents whose commitments fell due: each is posted to its conversation as a message
 * from `mesh`, with a turn there to do it, once. The message's id was fixed when the commitment
 * was made, so a sweep that stopped between posting and marking (or two replicas sweeping at
 * once) never posts twice: the second insert is refused and the commitment is only marked.
 * Answers how many reminders were posted.
 */
export async function remindDueCommitments(mesh: Mesh): Promise<number> {
  let posted = 0;
  for (const due of await dueCommitments(mesh.db, SWEEP_LIMIT)) {
    if (!due.conversationId) {
      // Made outside a conversation (an operator's call): there is nowhere to remind it.
      await markReminded(mesh.db, due.id);
      continue;
    }
    const reminded = () => getMessage(mesh.db, due.reminderMessageId);
    if (!(await reminded())) {
      try {
        await sendMessage(mesh, {
          agentId: due.agentId,
          conversationId: due.conversationId,
          actor: 'mesh',
          messageId: due.reminderMessageId,
          body: reminderBody(commitmentOf(due)),
        });
        posted += 1;
      } catch (error) {
        // Another sweep posted it first; anything else is the sweep's failure.
        if (!(await reminded())) throw error;
      }
    }
    await markReminded(mesh.db, due.id);
  }
  return posted;
}
