import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBudgetOperation } from '../../src/app/agents/budget-operation.ts';
import { createAgentOperation } from '../../src/app/agents/operations.ts';
import { addModelProvider } from '../../src/app/backends/model-providers.ts';
import { addWebProvider, grantWebProvider } from '../../src/app/backends/web-admin.ts';
import { workspaceAdmin, grantBackend } from '../../src/app/backends/workspace-admin.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import type { Script } from '../../src/providers/scripted.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';
import { startWebFake, type WebFake } from '../support/web-fakes/index.ts';

const EXA_KEY = `exa-${randomUUID()}`;

const exec = (command: string) => ({ name: 'workspace_exec', arguments: { command } });
const remember = (n: number) => ({ name: 'remember', arguments: { content: `thing ${n}` } });

/** One rule per meter, each spending its meter; every rule would answer "Done." in the end. */
const SCRIPT: Script = {
  rules: [
    {
      match: 'keep noting',
      rounds: [1, 2, 3, 4].map((n) => ({ toolCalls: [remember(n)] })),
    },
    { match: 'note three', rounds: [{ toolCalls: [1, 2, 3].map(remember) }, { content: 'Done.' }] },
    { match: 'tokens', rounds: [{ content: 'Done.' }] },
    { match: 'take your time', rounds: [{ toolCalls: [exec('sleep 1.5')] }, { content: 'Done.' }] },
    { match: 'compute', rounds: [{ toolCalls: [exec('sleep 5')] }, { content: 'Done.' }] },
    {
      match: 'search twice',
      rounds: [
        { toolCalls: [{ name: 'web_search', arguments: { query: 'mesh' } }] },
        { toolCalls: [{ name: 'web_search', arguments: { query: 'mesh again' } }] },
        { content: 'Done.' },
      ],
    },
  ],
  fallback: { content: 'Done.' },
};

/*
 * Issue 33, "told to the conversation": for each meter a run can spend — rounds, tool calls,
 * tokens, wall clock, compute and a web provider's per-run ceiling — a turn that spends it ends as
 * budget-exhausted, and the conversation gets a message, attributed to the agent, that names the
 * limit, what the run did and what it did not. Real parts throughout: a bubblewrap workspace for
 * the clock and compute, the Exa adapter against its loopback fake for the ceiling.
 */
describe.each(testDatabases())(
  'budget exhaustion told to the conversation on $name',
  (database) => {
    let mesh: Mesh;
    let exa: WebFake;
    let dispose: () => Promise<void>;
    const caller = { actor: 'operator:test' };

    beforeAll(async () => {
      const opened = await database.open();
      mesh = assembleMesh(opened.db, testInstanceKey(), { web: { baseDelayMs: 1 } });
      exa = await startWebFake('exa', { apiKey: EXA_KEY });
      dispose = async () => {
        await mesh.close();
        await opened.dispose();
        await exa.close();
      };
      await addModelProvider(mesh, { name: 'scripted', kind: 'scripted', script: SCRIPT });
      const agent = async (name: string, budget: Record<string, unknown>) => {
        await invokeOperation(
          mesh,
          createAgentOperation,
          { name, provider: 'scripted', model: 'm' },
          caller,
        );
        if (Object.keys(budget).length > 0)
          await invokeOperation(mesh, agentBudgetOperation, { agent: name, ...budget }, caller);
      };
      await agent('rounds', {});
      await agent('calls', { tool_calls: 2 });
      await agent('tokens', { tokens: 1000 });
      await agent('clock', { wall_clock_seconds: 1 });
      await agent('compute', { compute_seconds: 1 });
      await agent('ceiling', {});
      const backend = await workspaceAdmin.add(mesh, {
        name: 'dev',
        kind: 'local',
        development: true,
      });
      for (const name of ['clock', 'compute'])
        await grantBackend(mesh, {
          agent: name,
          backend: backend.name,
          allowHosts: [],
          operator: 't',
        });
      await addWebProvider(mesh, {
        name: 'exa_one',
        kind: 'exa',
        baseUrl: exa.baseUrl,
        apiKey: EXA_KEY,
        allowLoopbackHttp: true,
        maxCallsPerRun: 1,
      });
      await grantWebProvider(mesh, { agent: 'ceiling', provider: 'exa_one', operator: 't' });
    }, 60_000);

    afterAll(async () => {
      await dispose?.();
    });

    /** Sends `body` to `agent` and returns the run's end with its conversation's messages. */
    async function spend(agent: string, body: string) {
      const id = (
        await mesh.db.query<{ id: string }>('select id from agents where name = $1', [agent])
      ).rows[0]!.id;
      const ended = await chat(mesh, { agentId: id, actor: 'user:grace', body });
      const { rows } = await mesh.db.query<{ direction: string; actor: string; body: string }>(
        'select direction, actor, body from messages where conversation_id = $1 order by created_at',
        [ended.conversationId],
      );
      return { ended, messages: rows };
    }

    it.each([
      {
        meter: 'rounds',
        agent: 'rounds',
        body: 'keep noting things',
        limit: 'max rounds (3) reached',
        done: 'Done (2 tool calls):\n- remember: committed',
        raise: '`mesh agents budget rounds --rounds N`',
      },
      {
        meter: 'tool calls',
        agent: 'calls',
        body: 'note three things',
        limit: 'max tool calls (2) reached',
        done: 'Done (2 tool calls):\n- remember: committed',
        notDone: '- remember: asked for, never run',
        raise: '`mesh agents budget calls --tool-calls N`',
      },
      {
        meter: 'tokens',
        agent: 'tokens',
        body: `tokens: ${'a long request that does not fit '.repeat(200)}`,
        limit: 'max tokens (1000) reached',
        done: 'Done: nothing; no tool call ran.',
        raise: '`mesh agents budget tokens --tokens N`',
      },
      {
        meter: 'wall clock',
        agent: 'clock',
        body: 'take your time',
        limit: 'wall clock (1 s) ran out',
        done: 'Done (1 tool call):\n- workspace_exec: committed',
        raise: '`mesh agents budget clock --wall-clock 30m`',
      },
      {
        meter: 'compute',
        agent: 'compute',
        body: 'compute something long',
        limit: 'compute (1 s) spent',
        done: 'Done (1 tool call):\n- workspace_exec',
        raise: '`mesh agents budget compute --compute 10m`',
      },
      {
        meter: 'a provider ceiling',
        agent: 'ceiling',
        body: 'search twice',
        limit: "the run's ceiling of 1 calls to web provider exa_one is spent",
        done: 'Done (2 tool calls):\n- web_search: committed',
        raise: undefined,
      },
    ])(
      'ends the run on $meter and posts which limit, what was done and what was not',
      async ({ agent, body, limit, done, notDone, raise }) => {
        const { ended, messages } = await spend(agent, body);
        expect(ended.status).toBe('budget_exhausted');
        expect(ended.reason).toContain(limit);
        // The message is in the conversation, after the request, and attributed to the agent.
        expect(messages.map((m) => [m.direction, m.actor])).toEqual([
          ['inbound', 'user:grace'],
          ['outbound', agent],
        ]);
        const told = messages[1]!.body;
        expect(told).toBe(ended.reply);
        expect(told).toContain(`I stopped before finishing: this run's budget ran out (${limit}`);
        expect(told).toContain(done);
        expect(told).toContain('Not done:');
        expect(told).toContain('- the answer to this message: it is not finished');
        if (notDone) expect(told).toContain(notDone);
        if (raise) expect(told).toContain(raise);
        // The reply step keeps the run's end: a run resumed after it ends the same way.
        const reply = ended.steps.find((s) => s.kind === 'reply');
        expect(reply?.kind === 'reply' && reply.data.end).toEqual({
          status: 'budget_exhausted',
          reason: ended.reason,
        });
      },
      30_000,
    );
  },
);
