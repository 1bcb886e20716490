import type { JsonObject } from '../model/json.ts';
import type { Definition } from '../tool/definition.ts';
import { observation, type Observation } from '../tool/observation.ts';

/**
 * The agent's verb for handing its browser to a person: the run parks until someone of the
 * conversation takes the session over through its Live View, does what only a person should (a
 * login, a captcha, a payment confirmation), and hands it back. What they type goes to the page,
 * never to Mesh's record or the model. Declared in tools/agent/.
 */
export const BROWSER_HANDOFF = 'browser_handoff';

/** What the conversation is asked, with the Live View link the person acts through. */
export function handoffAsk(args: JsonObject, link: string): { question: string; body: string } {
  const reason = typeof args['reason'] === 'string' ? args['reason'].trim() : '';
  const question = `I need a person in the browser: ${reason}`;
  return {
    question,
    body: [
      question,
      '',
      `Take the browser over in Live View: ${link}`,
      'Hand it back when you are done; I will go on from the page you leave.',
    ].join('\n'),
  };
}

/** The handoff call's observation once someone handed the browser back. */
export function handBackObservation(answer: {
  readonly actor: string;
  readonly body: string;
  readonly messageId: string;
}): Observation {
  return observation({
    kind: 'result',
    text: `${answer.actor} took the browser over and handed it back: ${answer.body}\nThe page may have changed: read it again before acting.`,
    data: { handed_back_by: answer.actor, note: answer.body, message_id: answer.messageId },
  });
}

/** The observation of a handoff that could not park: why no one could take the browser over. */
export function handoffRefused(why: string): Observation {
  return observation({ kind: 'tool_error', text: `The browser cannot be handed over: ${why}` });
}

/** Whether a turn offers the handoff verb: only beside browser tools the agent was granted. */
export function offersHandoff(definitions: readonly Definition[]): boolean {
  return definitions.some((d) => d.class === 'browser' && d.tool.name !== BROWSER_HANDOFF);
}
