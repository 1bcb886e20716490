import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { turnEnvironment } from '../../src/app/conversations/turns.ts';
import type { ModelClient } from '../../src/model/client.ts';
import type { ModelRequest } from '../../src/model/wire.ts';
import { scriptedClient, type ScriptedReply } from '../../src/providers/scripted.ts';
import type { RunRecord, StepRecord } from '../../src/run/records.ts';
import type { Definition } from '../../src/tool/definition.ts';
import { createRegistry } from '../../src/tool/registry.ts';
import { turnDriver, type TurnEnvironment } from '../../src/turn/engine.ts';
import { receiveMessage } from '../../src/turn/intake.ts';
import { testDatabases } from '../support/db.ts';
import { catalogDefinitions } from '../support/remote-catalog.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

class Crash extends Error {}

/** A turn environment over `mesh` whose policy offers `tools()` and whose model records requests. */
function environment(
  mesh: Mesh,
  tools: () => readonly Definition[],
  replies: readonly ScriptedReply[],
  extra: Partial<TurnEnvironment> = {},
): { env: TurnEnvironment; requests: ModelRequest[] } {
  const base = turnEnvironment(mesh);
  const requests: ModelRequest[] = [];
  const scripted = scriptedClient({ responses: replies });
  const client: ModelClient = {
    kind: 'scripted',
    complete: (request, options) => {
      requests.push(request);
      return scripted.complete(request, options);
    },
  };
  const env: TurnEnvironment = {
    ...base,
    policyFor: async () => ({
      registry: createRegistry([...mesh.catalog.registry.definitions(), ...tools()]),
      withheld: [],
      configFor: () => ({}),
      publicSettings: '',
    }),
    modelFor: async () => ({
      client,
      model: 'recorded',
      budget: { contextTokens: 32000, reservedOutputTokens: 2000 },
    }),
    ...extra,
  };
  return { env, requests };
}

const requestsOf = (steps: readonly StepRecord[]) =>
  steps.flatMap((s) => (s.kind === 'model_request' ? [s.data] : []));

describe.each(testDatabases())('progressive tool loading in a turn on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  const catalog = catalogDefinitions();
  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = () => opened.dispose();
  });
  afterAll(() => dispose());

  async function start(body: string): Promise<RunRecord> {
    const agentId = await scriptedAgent(mesh, { responses: [] });
    const { run } = await receiveMessage(mesh.ledger, {
      agentId,
      actor: 'ada',
      body,
      lease: { owner: 'test', leaseMs: 60_000 },
    });
    return run;
  }
  const drive = (env: TurnEnvironment, run: RunRecord) =>
    turnDriver(env).drive({
      run,
      lease: { runId: run.id, owner: 'test', epoch: run.leaseEpoch },
      ledger: mesh.ledger,
      signal: new AbortController().signal,
    });

  it('searches, calls the loaded tool and a granted one it never loaded, then answers', async () => {
    const run = await start('open a PR for the fix and tell #dev');
    const { env, requests } = environment(mesh, () => catalog, [
      { toolCalls: [{ name: 'tool_search', arguments: { query: 'open a pull request' } }] },
      {
        toolCalls: [
          {
            name: 'github__create_pull_request',
            arguments: { owner: 'o', repo: 'r', title: 'Fix', head: 'fix', base: 'main' },
          },
          { name: 'slack__slack_post_message', arguments: { channel_id: 'C1', text: 'PR up' } },
        ],
      },
      { content: 'Opened the PR and told #dev.' },
    ]);
    expect(await drive(env, run)).toEqual({ status: 'succeeded', reason: null });

    const offered = requests.map((r) => r.tools.map((t) => t.name));
    expect(offered[0]).toEqual([
      'request_input',
      // The catalog grants the browser tools: their handoff verb is the agent's own.
      'browser_handoff',
      'progress',
      'commit',
      // A new agent has no memory: recall, amend and forget wait for one.
      'remember',
      'tool_search',
    ]);
    expect(offered[1]).toContain('github__create_pull_request');
    expect(offered[1]).not.toContain('slack__slack_post_message');
    expect(offered[2]).toEqual([]);

    const steps = await mesh.ledger.steps(run.id);
    const [first, second] = requestsOf(steps);
    const loading = first?.['loading'] as {
      index: boolean;
      allTokens: number;
      indexTokens: number;
    };
    console.log('first request:', JSON.stringify(loading));
    expect(loading.index).toBe(true);
    expect(loading.indexTokens).toBeLessThan(loading.allTokens);
    expect(second?.['loading']).toMatchObject({
      loaded: expect.arrayContaining([
        { name: 'github__create_pull_request', query: 'open a pull request' },
      ]) as unknown,
      unloaded: [],
    });
    const observed = steps.flatMap((s) => (s.kind === 'observation' ? [s.observation] : []));
    expect(observed.map((o) => o['kind'])).toEqual(['result', 'result', 'result']);
    expect(observed[2]?.['text']).toBe(
      'slack__slack_post_message ran with {"channel_id":"C1","text":"PR up"}',
    );
    const stored = await mesh.ledger.run(run.id);
    expect(stored?.checkpoint['activations']).toContainEqual(
      expect.objectContaining({ name: 'github__create_pull_request' }),
    );
  });

  it('refuses and names an activation revoked while the run waited', async () => {
    const run = await start('open a PR please');
    let granted = catalog;
    const replies: ScriptedReply[] = [
      { toolCalls: [{ name: 'tool_search', arguments: { query: 'open a pull request' } }] },
      { content: 'I can no longer open pull requests.' },
    ];
    // The first worker searches, then dies before it asks the model again.
    const dying = environment(mesh, () => granted, replies, {
      hooks: {
        at(point) {
          if (point === 'after_observation') throw new Crash('process died');
        },
      },
    });
    await expect(drive(dying.env, run)).rejects.toThrow('process died');
    expect((await mesh.ledger.run(run.id))?.checkpoint['activations']).toContainEqual(
      expect.objectContaining({ name: 'github__create_pull_request' }),
    );

    // Meanwhile the operator revokes the tool; the run is resumed under what is granted now.
    granted = catalog.filter((d) => d.tool.name !== 'github__create_pull_request');
    const resumed = environment(mesh, () => granted, replies);
    const again = (await mesh.ledger.run(run.id)) as RunRecord;
    expect(await drive(resumed.env, again)).toEqual({ status: 'succeeded', reason: null });

    const sent = resumed.requests[0];
    expect(sent?.tools.map((t) => t.name)).not.toContain('github__create_pull_request');
    const notice = sent?.messages.find(
      (m) => m.role === 'system' && m.content.startsWith('Tools you had loaded'),
    );
    expect(notice?.content).toContain(
      'github__create_pull_request (it is no longer granted to you)',
    );
    const second = requestsOf(await mesh.ledger.steps(run.id))[1];
    expect(second?.['loading']).toMatchObject({
      refused: [{ name: 'github__create_pull_request', reason: 'it is no longer granted to you' }],
    });
  });

  it('keeps its activations while parked on a question, and refuses one revoked before the answer', async () => {
    const run = await start('open a PR for the fix, after asking which branch');
    let granted = catalog;
    const replies: ScriptedReply[] = [
      { toolCalls: [{ name: 'tool_search', arguments: { query: 'open a pull request' } }] },
      { toolCalls: [{ name: 'request_input', arguments: { question: 'Which branch?' } }] },
      { content: 'I can no longer open pull requests.' },
    ];
    const asking = environment(mesh, () => granted, replies);
    const parked = await drive(asking.env, run);
    expect(parked.status).toBe('awaiting_input');
    // Parked: no lease, and the loaded tool is kept in the run's checkpoint.
    const waiting = (await mesh.ledger.run(run.id)) as RunRecord;
    expect(waiting).toMatchObject({ status: 'awaiting_input', leaseOwner: null });
    expect(waiting.checkpoint['activations']).toContainEqual(
      expect.objectContaining({ name: 'github__create_pull_request' }),
    );

    // While it waits, the operator revokes the tool; then Ada answers and a worker resumes.
    granted = catalog.filter((d) => d.tool.name !== 'github__create_pull_request');
    const answered = await mesh.ledger.answer({
      runId: run.id,
      actor: 'ada',
      body: 'main',
      messageId: crypto.randomUUID(),
      observation: {
        question: { kind: 'result', text: 'ada answered: main' },
        browser_handoff: { kind: 'result', text: 'ada handed back: main' },
      },
    });
    expect(answered.kind).toBe('answered');
    const claimed = await mesh.ledger.claim('resumer', 60_000);
    expect(claimed?.id).toBe(run.id);
    const resumed = environment(mesh, () => granted, replies);
    const end = await turnDriver(resumed.env).drive({
      run: claimed as RunRecord,
      lease: { runId: run.id, owner: 'resumer', epoch: (claimed as RunRecord).leaseEpoch },
      ledger: mesh.ledger,
      signal: new AbortController().signal,
    });
    expect(end).toEqual({ status: 'succeeded', reason: null });
    const sent = resumed.requests[0];
    expect(sent?.tools.map((t) => t.name)).not.toContain('github__create_pull_request');
    expect(
      sent?.messages.find((m) => m.role === 'tool' && m.content === 'ada answered: main'),
    ).toBeDefined();
    const notice = sent?.messages.find(
      (m) => m.role === 'system' && m.content.startsWith('Tools you had loaded'),
    );
    expect(notice?.content).toContain(
      'github__create_pull_request (it is no longer granted to you)',
    );
  });
});
