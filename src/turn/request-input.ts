import type { JsonObject } from '../model/json.ts';
import { observation, type Observation } from '../tool/observation.ts';

/**
 * The agent's own verb for asking its conversation (declared in tools/agent/): the run parks
 * until someone answers.
 */
export const REQUEST_INPUT = 'request_input';

/** The question a parked call asks, read from its (validated) arguments. */
export interface Question {
  readonly question: string;
  readonly choices: readonly string[];
}

/** The question in a request_input call's arguments, validated by the executor beforehand. */
export function questionFrom(args: JsonObject): Question {
  const question = typeof args['question'] === 'string' ? args['question'].trim() : '';
  const given = Array.isArray(args['choices'])
    ? args['choices'].filter((c): c is string => typeof c === 'string').map((c) => c.trim())
    : [];
  // A blank choice is dropped (the schema does not spend a pattern on it); fewer than two left
  // is no list to pick from, so the question is asked open.
  const kept = [...new Set(given.filter((c) => c !== ''))];
  return { question, choices: kept.length >= 2 ? kept : [] };
}

/** The question as posted to the conversation, attributed to the agent. */
export function questionBody(q: Question): string {
  if (q.choices.length === 0) return q.question;
  return [q.question, '', ...q.choices.map((c, i) => `${i + 1}. ${c}`)].join('\n');
}

/** The call's observation once someone answered: who, and what they said. */
export function answerObservation(answer: {
  readonly actor: string;
  readonly body: string;
  readonly messageId: string;
}): Observation {
  return observation({
    kind: 'result',
    text: `${answer.actor} answered: ${answer.body}`,
    data: { answer: answer.body, answered_by: answer.actor, message_id: answer.messageId },
  });
}

/** The call's observation when its question expired unanswered (the run ends with it). */
export function expiredObservation(waited: string): Observation {
  return observation({
    kind: 'tool_error',
    text: `No one answered within ${waited}; the question expired and the run ended.`,
  });
}
