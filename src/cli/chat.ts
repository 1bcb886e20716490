import { parseArgs } from 'node:util';
import { withMesh } from '../app/mesh.ts';
import { currentOperator } from '../app/operator-call.ts';
import { chat } from '../app/turns.ts';
import { findAgent } from '../store/agents.ts';
import { UsageError, type Command } from './command.ts';
import { runJson } from '../app/views.ts';

const USAGE = `Usage:
  mesh chat --agent NAME [--conversation ID] [--as ACTOR] [--json] "text"

Sends a message to an agent and prints its reply. The message is persisted first, with its actor
(default: you, as user@host), and its run is created in the same transaction; the turn runs in
this process. With --json, prints run_id, status, reply and steps.`;

/** `mesh chat`: talk to an agent from a terminal. */
export const chatCommand: Command = {
  name: 'chat',
  summary: 'Send a message to an agent and print its reply',
  usage: USAGE,
  async run(args, io) {
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
    const agentName = values.agent;
    if (!agentName) throw new UsageError('--agent is required');
    const text = positionals.join(' ');
    if (text.trim() === '') throw new UsageError('the message text is missing');
    return withMesh(async (mesh) => {
      const agent = await findAgent(mesh.db, agentName);
      if (!agent) {
        io.err(`mesh chat: no agent named ${JSON.stringify(agentName)}`);
        return 1;
      }
      const result = await chat(mesh, {
        agentId: agent.id,
        ...(values.conversation ? { conversationId: values.conversation } : {}),
        actor: values.as ?? currentOperator(),
        body: text,
      });
      if (values.json) {
        const run = await mesh.ledger.run(result.runId);
        io.out(
          JSON.stringify(
            {
              ...(run ? runJson(run, result.steps) : {}),
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
    });
  },
};
