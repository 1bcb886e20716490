import { MAX_WAIT_S } from '../conversations/operations.ts';
import { RUN_FIELD } from '../operations/fields.ts';
import { actingAs } from '../operations/acting.ts';
import { defineOperation } from '../operations/operation.ts';

/** What answering a run's question answers: the answer's message, and the run as it stands. */
export interface AnswerAnswer {
  readonly run_id: string;
  readonly conversation_id: string;
  readonly message_id: string;
  readonly answered_by: string;
  /** `queued` at once; with `wait`, the run's status when it settled or the wait ran out. */
  readonly status: string;
  readonly reason?: string | null;
  /** The run's reply, once it settled within the wait. */
  readonly reply?: string | null;
  readonly events: string;
  readonly run: string;
}

export const answerRunOperation = defineOperation({
  name: 'runs.answer',
  summary:
    'Answer the question a run parked on (request_input), as anyone in its conversation: the answer is an attributed message, and the run resumes with it',
  description: [
    "A run that asked its conversation a question waits in `awaiting_input`, holding no worker. Anyone who has spoken in the conversation may answer, not only the person who asked. The answer is recorded as their message in the conversation and as the question's observation, and the run is queued; a worker resumes it from there.",
    '',
    `Refused with \`not_awaiting_input\` (409) when the run is not waiting for an answer (it asked nothing, or someone answered first), \`question_expired\` (409) after the question's expiry, and \`not_a_participant\` (403) for an actor who has not spoken in the conversation. With \`?wait=SECONDS\` (0-${MAX_WAIT_S}) the answer waits for the resumed run to settle and carries its reply.`,
  ].join('\n'),
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['run', 'body'],
    properties: {
      run: RUN_FIELD,
      body: {
        type: 'string',
        minLength: 1,
        maxLength: 100000,
        pattern: '\\S',
        description: 'the answer',
      },
      actor: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description:
          'who answers, as the channel names them (default: the caller); only a relay token may name another, and it is recorded as relayed by that token',
      },
      wait: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_S,
        description: `wait up to this many seconds (0-${MAX_WAIT_S}) for the resumed run to settle, and answer its reply if it does`,
      },
    },
  },
  errors: [
    'run_not_found',
    'run_id_ambiguous',
    'not_awaiting_input',
    'question_expired',
    'not_a_participant',
    'relay_not_allowed',
  ],
  http: {
    method: 'POST',
    path: '/api/runs/{run}/answer',
    query: ['wait'],
    preferWait: 'wait',
    status: 202,
    answer: (out: AnswerAnswer) => ({
      status: out.reply === undefined ? 202 : 200,
      headers: { location: out.run },
    }),
  },
  cli: {
    command: ['runs', 'answer'],
    positionals: ['run', 'body'],
    print: (out: AnswerAnswer) => [
      `Answered run ${out.run_id.slice(0, 8)} as ${out.answered_by}; it is ${out.status}.`,
      ...(out.reply ? ['', out.reply] : []),
      ...(out.reply === undefined
        ? [`Follow it: mesh runs show ${out.run_id.slice(0, 8)} --wait ${MAX_WAIT_S}`]
        : []),
    ],
  },
  async run(mesh, input, caller): Promise<AnswerAnswer> {
    const [{ answerRun }, { turnOutcome }] = await Promise.all([
      import('./answer.ts'),
      import('../conversations/turns.ts'),
    ]);
    const answered = await answerRun(
      mesh,
      { run: input.run, body: input.body, ...actingAs(caller, input.actor, 'actor') },
      'input.run',
    );
    const links = {
      events: `/api/runs/${answered.runId}/events`,
      run: `/api/runs/${answered.runId}`,
    };
    const base = {
      run_id: answered.runId,
      conversation_id: answered.conversationId,
      message_id: answered.messageId,
      answered_by: answered.answeredBy,
      ...links,
    };
    if (!input.wait) return { ...base, status: 'queued' };
    const run = await mesh.runs.settled(answered.runId, input.wait * 1000);
    const outcome = run && (await turnOutcome(mesh, run));
    if (!run || !outcome || run.status === 'queued' || run.status === 'running')
      return { ...base, status: run?.status ?? 'queued' };
    return { ...base, status: outcome.status, reason: outcome.reason, reply: outcome.reply };
  },
});
