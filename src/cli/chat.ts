import { parseArgs } from 'node:util';
import { withUseCases } from '../app/use-case-client.ts';
import { runJson } from '../app/views.ts';
import { UsageError, type CommandBody } from './command.ts';

/** `mesh chat`: talk to an agent from a terminal. */
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
  const { result, shown } = await withUseCases(async (call) => {
    const result = await call('chat.send', {
      agent,
      ...(values.conversation ? { conversationId: values.conversation } : {}),
      ...(values.as === undefined ? {} : { actor: values.as }),
      body: text,
    });
    return {
      result,
      shown: values.json ? await call('runs.show', { id: result.runId }) : undefined,
    };
  });
  if (values.json) {
    io.out(
      JSON.stringify(
        {
          ...(shown ? runJson(shown.run, result.steps, shown.effects) : {}),
          conversation_id: result.conversationId,
          reply: result.reply,
        },
        null,
        2,
      ),
    );
  } else {
    if (result.reply !== null) io.out(result.reply);
    io.err(
      `run ${result.runId} ${result.status}${result.reason ? ` (${result.reason})` : ''}; conversation ${result.conversationId}`,
    );
  }
  return result.status === 'succeeded' ? 0 : 1;
};
