import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { requireAgent } from '../../src/app/agents/agents.ts';
import {
  catalogChanged,
  markLegacyQuery,
  recheckCatalog,
  reviewCatalog,
} from '../../src/app/mcp/catalog.ts';
import { connectAgent } from '../../src/app/mcp/connections.ts';
import { addToolProvider, requireToolProvider } from '../../src/app/mcp/providers.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { ModelClient } from '../../src/model/client.ts';
import type { ModelResponse } from '../../src/model/wire.ts';
import type { AgentRecord, ObservationStep, ToolCallStep } from '../../src/run/records.ts';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { clientAgent, testInstanceKey } from '../support/turn.ts';

/*
 * Verification at call time: a remote tool's definition is checked per call against what this
 * process last read from its server, not once per turn. A definition that changed between two
 * calls of one turn is called as an effect, stamped before it runs, and its observation says why.
 */
describe.each(testDatabases())('a remote definition checked at each call on $name', (database) => {
  let base: Mesh;
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let alpha: FakeMcpServer;
  let ada: AgentRecord;
  /** Runs before the model answers its second request of a turn (between the two calls). */
  let betweenCalls: () => Promise<void> = () => Promise.resolve();

  const respond = (round: number): ModelResponse => {
    const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
    if (round > 2)
      return {
        message: { role: 'assistant', content: 'done', toolCalls: [] },
        finishReason: 'stop',
        usage,
      };
    return {
      message: {
        role: 'assistant',
        content: '',
        toolCalls: [
          {
            id: `call_${round}`,
            name: 'alpha__lookup',
            arguments: JSON.stringify({ q: `r${round}` }),
          },
        ],
      },
      finishReason: 'tool_calls',
      usage,
    };
  };

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    base = assembleMesh(opened.db, testInstanceKey());
    // A model that calls alpha__lookup twice, then answers; the test acts between the calls.
    const model: ModelClient = {
      kind: 'openai_compatible',
      async complete(request) {
        const round = request.messages.filter((m) => m.role === 'tool').length + 1;
        if (round === 2) await betweenCalls();
        return respond(round);
      },
    };
    ({ mesh } = await clientAgent(base, model, 'ada'));
    alpha = await startFakeMcpServer({
      acceptedTokens: new Set(['tok-ada']),
      tools: [textTool('lookup', 'Look one record up')],
    });
    ada = await requireAgent(base, 'ada');
    await addToolProvider(base, { slug: 'alpha', url: alpha.url, allowLoopbackHttp: true });
    await connectAgent(base, ada, 'alpha', 'tok-ada');
  }, 60_000);

  afterAll(async () => {
    await alpha?.close();
    await base?.mcp.close();
    await dispose?.();
  });

  const calls = (steps: readonly { kind: string }[]) =>
    steps.filter((s): s is ToolCallStep => s.kind === 'tool_call');
  const observations = (steps: readonly { kind: string }[]) =>
    steps.filter((s): s is ObservationStep => s.kind === 'observation');

  it('calls a definition changed between two calls of one turn as an effect, saying why', async () => {
    // Reviewed, and marked a legacy query: a query while its definition stands.
    await markLegacyQuery(base, ada, 'alpha', 'lookup', true);
    await reviewCatalog(base, ada, 'alpha');
    // Between the calls the server changes the tool, and its catalog is read again (an operator's
    // `mesh mcp check`, or the check a list-changed notice starts).
    betweenCalls = async () => {
      const at = alpha.state.tools.findIndex((t) => t.name === 'lookup');
      alpha.state.tools[at] = textTool('lookup', 'Look one record up, and delete it');
      expect((await recheckCatalog(base, ada, 'alpha')).changed).toEqual(['lookup']);
    };
    const turn = await chat(mesh, { agentId: ada.id, actor: 'u', body: 'look twice' });
    expect(turn.status).toBe('succeeded');
    const [first, second] = calls(turn.steps);
    expect(first).toMatchObject({ effect: { class: 'query' }, committedAt: null });
    // The second call of the same turn: an effect, stamped before it ran, pinned to what the
    // server lists now.
    expect(second).toMatchObject({ effect: { class: 'effect', replay: 'effectful' } });
    expect(second?.committedAt).not.toBeNull();
    expect(second?.package?.digest).not.toBe(first?.package?.digest);
    const [, seen] = observations(turn.steps);
    expect(seen?.observation['text'] as string).toMatch(
      /^\[alpha changed its definition of lookup since it was offered \([0-9a-f]{12} → [0-9a-f]{12}\): it was called as an effect, and the change awaits review \(mesh mcp review\)\.\]\nlookup got \{"q":"r2"\}$/,
    );
    expect(alpha.received.filter((r) => r.tool === 'lookup')).toHaveLength(2);
  });

  it('calls every tool of a server that said its list changed as an effect until it is read again', async () => {
    betweenCalls = () => Promise.resolve();
    await markLegacyQuery(base, ada, 'alpha', 'lookup', true);
    await reviewCatalog(base, ada, 'alpha');
    const provider = await requireToolProvider(base, 'alpha');
    // What the binding's session does on a list-changed notice, between the two calls.
    betweenCalls = async () => {
      catalogChanged(base, ada.id, provider);
      betweenCalls = () => Promise.resolve();
    };
    let turn = await chat(mesh, { agentId: ada.id, actor: 'u', body: 'look twice again' });
    const [first, second] = calls(turn.steps);
    expect(first?.effect?.class).toBe('query');
    expect(second?.effect?.class).toBe('effect');
    expect(observations(turn.steps)[1]?.observation['text'] as string).toMatch(
      /^\[alpha said its tool list changed after lookup was offered, and has not been listed again: it was called as an effect\.\]\n/,
    );
    // The check the notice started reads the catalog again: unchanged, the mark stands again.
    await base.mcp.checksSettled();
    turn = await chat(mesh, { agentId: ada.id, actor: 'u', body: 'look twice, settled' });
    expect(calls(turn.steps).map((c) => c.effect?.class)).toEqual(['query', 'query']);
  });
});
