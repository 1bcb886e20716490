import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBudgetOperation } from '../../src/app/agents/budget-operation.ts';
import { createAgentOperation } from '../../src/app/agents/operations.ts';
import { addModelProvider } from '../../src/app/backends/model-providers.ts';
import {
  addWebProvider,
  grantWebProvider,
  setWebProvider,
} from '../../src/app/backends/web-admin.ts';
import { chat, sendMessage } from '../../src/app/conversations/turns.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { budgetFrom } from '../../src/run/budget.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

/*
 * An agent's budget profile: set and shown through the operation, copied by each run when it is
 * created and never changed under it, and the turn's rounds bounded by it (the last permitted
 * round carries no tools) instead of a constant.
 */

/** Four tool rounds, then an answer: five model requests in all. */
const SCRIPT = {
  rules: [
    {
      match: 'note four things',
      rounds: [
        ...[1, 2, 3, 4].map((n) => ({
          toolCalls: [{ name: 'remember', arguments: { content: `thing ${n}` } }],
        })),
        { content: 'Noted all four.' },
      ],
    },
  ],
  fallback: { content: 'Hello.' },
};

describe.each(testDatabases())('agent budget profiles on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  const caller = { actor: 'operator:test' };
  const budget = (input: Record<string, unknown>) =>
    invokeOperation(mesh, agentBudgetOperation, { agent: 'ada', ...input }, caller);
  const refusal = (input: Record<string, unknown>) =>
    budget(input).then(
      () => undefined,
      (e: unknown) => e as { code: string; data?: { field?: string } },
    );

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = async () => {
      await mesh.close();
      await opened.dispose();
    };
    await addModelProvider(mesh, { name: 'scripted', kind: 'scripted', script: SCRIPT });
    await invokeOperation(
      mesh,
      createAgentOperation,
      { name: 'ada', provider: 'scripted', model: 'm' },
      caller,
    );
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
  });

  const agentId = async () =>
    (await mesh.db.query<{ id: string }>(`select id from agents where name = 'ada'`)).rows[0]?.id ??
    '';

  it('gives a run the default three rounds, the last one without tools', async () => {
    const shown = await budget({});
    expect(shown.budget).toMatchObject({ rounds: 3, tool_calls: 16, tokens: 200000 });
    expect(shown.set).toEqual([]);
    const ended = await chat(mesh, {
      agentId: await agentId(),
      actor: 'user:ada',
      body: 'note four things',
    });
    // The third request offers no tool; the model still wanted one, so the run stopped on its
    // rounds, and the conversation is told which limit, what was done and what was not.
    expect(ended.status).toBe('budget_exhausted');
    expect(ended.reply).toContain("this run's budget ran out (max rounds (3) reached)");
    expect(ended.reply).toContain('Done (2 tool calls):\n- remember: committed');
    expect(ended.reply).toContain('Not done:');
    expect(ended.reply).toContain('`mesh agents budget ada --rounds N`');
    expect(ended.steps.filter((s) => s.kind === 'tool_call')).toHaveLength(2);
    const requests = ended.steps.filter((s) => s.kind === 'model_request');
    expect(requests).toHaveLength(3);
    const last = requests.at(-1);
    expect(last?.kind === 'model_request' && last.data['lastRound']).toBe(true);
    expect(last?.kind === 'model_request' && last.data['offered']).toEqual([]);
  });

  it('lets a run go as many rounds as the profile allows, and a run keeps the budget it was created with', async () => {
    const set = await budget({ rounds: 6, wall_clock_seconds: 1800 });
    expect(set.budget).toMatchObject({ rounds: 6, wall_clock_seconds: 1800, tool_calls: 16 });
    expect(set.set).toEqual(['rounds', 'wall_clock_seconds']);

    const done = await chat(mesh, {
      agentId: await agentId(),
      actor: 'user:ada',
      body: 'note four things',
    });
    expect(done.status).toBe('succeeded');
    expect(done.reply).toBe('Noted all four.');
    expect(done.steps.filter((s) => s.kind === 'tool_call')).toHaveLength(4);

    // A queued run copied the profile; changing the profile afterwards does not reach it.
    const queued = await sendMessage(mesh, {
      agentId: await agentId(),
      actor: 'user:ada',
      body: 'hello',
    });
    await budget({ rounds: 2 });
    const copied = await mesh.ledger.run(queued.runId);
    expect(budgetFrom(copied?.budget ?? {})).toMatchObject({
      maxRounds: 6,
      wallClockMs: 1_800_000,
    });
    const later = await sendMessage(mesh, {
      agentId: await agentId(),
      actor: 'user:ada',
      body: 'hello again',
    });
    expect(budgetFrom((await mesh.ledger.run(later.runId))?.budget ?? {}).maxRounds).toBe(2);
    await mesh.runs.settled(queued.runId, 10_000);
    await mesh.runs.settled(later.runId, 10_000);

    // Reset: every meter not given is the default again.
    const reset = await budget({ reset: true, tool_calls: 40 });
    expect(reset.budget).toMatchObject({ rounds: 3, tool_calls: 40, wall_clock_seconds: 300 });
    expect(reset.set).toEqual(['tool_calls']);
  });

  it("copies each granted web provider's call ceiling into the run: mesh web set reaches later runs only", async () => {
    await addWebProvider(mesh, { name: 'exa', kind: 'exa', apiKey: 'exa-key', maxCallsPerRun: 5 });
    await grantWebProvider(mesh, { agent: 'ada', provider: 'exa', operator: 'operator:test' });
    const before = await sendMessage(mesh, {
      agentId: await agentId(),
      actor: 'user:ada',
      body: 'hello',
    });
    await setWebProvider(mesh, { provider: 'exa', maxCallsPerRun: 1 });
    const after = await sendMessage(mesh, {
      agentId: await agentId(),
      actor: 'user:ada',
      body: 'hello again',
    });
    const ceiling = async (runId: string) =>
      budgetFrom((await mesh.ledger.run(runId))?.budget ?? {}).providerCalls['exa'];
    expect(await ceiling(before.runId)).toBe(5);
    expect(await ceiling(after.runId)).toBe(1);
    await mesh.runs.settled(before.runId, 10_000);
    await mesh.runs.settled(after.runId, 10_000);
  });

  it('refuses a meter out of its bounds or of the wrong type, naming it, and changes nothing', async () => {
    for (const [input, field] of [
      [{ rounds: 0 }, 'input.rounds'],
      [{ rounds: 201 }, 'input.rounds'],
      [{ tokens: 999 }, 'input.tokens'],
      [{ wall_clock_seconds: '30m' }, 'input.wall_clock_seconds'],
      [{ compute_seconds: 1.5 }, 'input.compute_seconds'],
      [{ session_minutes: 100_000 }, 'input.session_minutes'],
      [{ rounds_per_day: 3 }, 'input.rounds_per_day'],
    ] as const) {
      const refused = await refusal(input);
      expect(refused?.code, JSON.stringify(input)).toBe('invalid_input');
      expect(refused?.data?.field, JSON.stringify(input)).toBe(field);
    }
    expect((await refusal({ agent: 'ghost' }))?.code).toBe('agent_not_found');
    expect((await budget({})).budget.tool_calls).toBe(40);
  });
});
