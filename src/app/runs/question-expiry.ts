import { randomUUID } from 'node:crypto';
import { budgetFrom, formatSeconds } from '../../run/budget.ts';
import { observationJson } from '../../run/observation-json.ts';
import { getAgent } from '../../store/agents.ts';
import { dueQuestions } from '../../store/questions.ts';
import { expiredObservation } from '../../turn/request-input.ts';
import { stopNotice } from '../../turn/stop-notice.ts';
import type { Mesh } from '../mesh.ts';

/** How many expired questions one sweep ends at most (the next sweep takes the rest). */
const SWEEP_LIMIT = 50;

/**
 * Ends the runs whose question expired unanswered: each question's run fails with the reason, and
 * its conversation is told, by the agent, what it asked, that no one answered in time, what the
 * run did and what it did not. Safe on many replicas at once and against a racing answer: each
 * expiry is one conditional transaction, and whoever settles the question first wins. Answers
 * how many runs it ended.
 */
export async function expireQuestions(mesh: Mesh): Promise<number> {
  let ended = 0;
  for (const due of await dueQuestions(mesh.db, SWEEP_LIMIT)) {
    if (!due.conversationId) continue;
    const [agent, steps] = await Promise.all([
      getAgent(mesh.db, due.agentId),
      mesh.ledger.steps(due.runId),
    ]);
    const waited = formatSeconds(budgetFrom(due.budget).questionWaitMs / 1000);
    const name = agent?.name ?? 'the agent';
    const body = stopNotice({
      headline: `I stopped before finishing: no one answered my question within ${waited}, so it expired. I had asked: "${due.question}"`,
      steps,
      settled: [due.callId],
      raise: `mesh agents budget ${name} --question-wait 48h`,
    });
    const expired = await mesh.ledger.expire({
      runId: due.runId,
      callId: due.callId,
      reason: `question expired: no answer within ${waited}`,
      observation: observationJson(expiredObservation(waited)),
      message: { id: randomUUID(), conversationId: due.conversationId, actor: name, body },
    });
    if (expired) ended += 1;
  }
  return ended;
}
