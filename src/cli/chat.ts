import { parseArgs } from 'node:util';
import {
  MAX_WAIT_S,
  sendMessageOperation,
  type SentAnswer,
} from '../app/conversations/operations.ts';
import type { RunAnswer } from '../app/runs/run-lines.ts';
import { showRunOperation } from '../app/runs/operations.ts';
import { UsageError, type CommandBody } from './command.ts';

/** Whether a run has settled (neither queued nor running). */
const settled = (status: string) => status !== 'queued' && status !== 'running';

/**
 * `mesh chat`: talk to an agent from a terminal. The message is sent as `messages.send` asks,
 * waiting for the reply; a run still going when the wait ends is followed (`runs.show`, waiting
 * again) until it settles. A run that parked on a question prints the question and how to
 * answer it (`mesh runs answer`).
 */
export const chatCommand: CommandBody = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      agent: { type: 'string' },
      conversation: { type: 'string' },
      as: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const agent = values.agent;
  if (!agent) throw new UsageError('--agent is required');
  const text = positionals.join(' ');
  if (text.trim() === '') throw new UsageError('the message text is missing');
  const { invokeFromCli } = await import('./operation-client.ts');
  const sent = (await invokeFromCli(sendMessageOperation, {
    agent,
    body: text,
    ...(values.conversation ? { conversation_id: values.conversation } : {}),
    ...(values.as === undefined ? {} : { actor: values.as }),
    wait: MAX_WAIT_S,
  })) as SentAnswer;
  let status = sent.status;
  let run: RunAnswer | undefined;
  // A parked run's question is read from the run: it is the agent's answer for now.
  while (!settled(status) || ((values.json || status === 'awaiting_input') && !run)) {
    run = (await invokeFromCli(showRunOperation, {
      run: sent.run_id,
      wait: MAX_WAIT_S,
    })) as RunAnswer;
    status = run.status;
  }
  const question = run?.questions?.find((q) => q.state === 'open');
  const reply =
    sent.reply !== undefined && sent.reply !== null
      ? sent.reply
      : ((run?.steps.find((s) => s.kind === 'reply')?.data?.['body'] as string | undefined) ??
        (question
          ? [question.question, ...question.choices.map((c, i) => `${i + 1}. ${c}`)].join('\n')
          : null));
  const reason = run ? run.reason : (sent.reason ?? null);
  if (values.json) {
    io.out(JSON.stringify({ ...run, conversation_id: sent.conversation_id, reply }, null, 2));
  } else {
    if (reply !== null) io.out(reply);
    io.err(
      `run ${sent.run_id} ${status}${reason ? ` (${reason})` : ''}; conversation ${sent.conversation_id}`,
    );
    if (question?.kind === 'browser_handoff')
      io.err(
        `anyone in the conversation takes the browser over in Live View (${question.link ?? 'no link'}) and hands it back: mesh runs answer ${sent.run_id.slice(0, 8)} "what you did"`,
      );
    else if (question)
      io.err(
        `anyone in the conversation answers: mesh runs answer ${sent.run_id.slice(0, 8)} "TEXT"`,
      );
  }
  // A run waiting on its question did what it should: it asked.
  return status === 'succeeded' || status === 'awaiting_input' ? 0 : 1;
};
