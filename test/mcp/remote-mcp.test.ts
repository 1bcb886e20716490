import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { manualClock } from '../../src/tool/clock.ts';
import {
  catalogView,
  excludeTool,
  markLegacyQuery,
  reviewCatalog,
  setScopes,
} from '../../src/app/mcp/catalog.ts';
import { connectAgent, disconnectAgent } from '../../src/app/mcp/connections.ts';
import { DEFAULT_CATALOG_FRESH_MS } from '../../src/app/mcp/runtime.ts';
import { addToolProvider } from '../../src/app/mcp/providers.ts';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { requireAgent } from '../../src/app/agents/agents.ts';
import { agentRegistry } from '../../src/app/packages/policy.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { AgentRecord } from '../../src/run/records.ts';
import { insertToolProvider } from '../../src/store/mcp.ts';
import { runEffects } from '../../src/app/runs/outbound-view.ts';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

describe.each(testDatabases())('remote MCP on $name', (database) => {
  // Catalog freshness is read from the Mesh's clock: it moves only when a test says.
  const clock = manualClock(new Date());
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let alpha: FakeMcpServer;
  let beta: FakeMcpServer;
  let ada: AgentRecord;
  let bob: AgentRecord;

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    mesh = assembleMesh(opened.db, testInstanceKey(), { clock });
    alpha = await startFakeMcpServer({
      pageSize: 3,
      acceptedTokens: new Set(['tok-ada', 'tok-bob']),
      tools: [
        textTool('search', 'Search the alpha index'),
        textTool('lookup', 'Look one record up', { annotations: { readOnlyHint: true } }),
        ...Array.from({ length: 6 }, (_, i) => textTool(`extra_${i}`, `Extra tool ${i}`)),
      ],
    });
    beta = await startFakeMcpServer({ tools: [textTool('search', 'Search the beta index')] });
    const script = {
      rules: [
        {
          match: '\\bfind (.+)$',
          rounds: [
            { toolCalls: [{ name: 'tool_search', arguments: { query: '$1' } }] },
            { content: 'found' },
          ],
        },
        {
          match: 'use (\\w+) (\\S+)$',
          rounds: [{ toolCalls: [{ name: '$1', arguments: { q: '$2' } }] }, { content: 'done' }],
        },
      ],
      fallback: { content: 'hello' },
    };
    ada = await requireAgent(mesh, await scriptedAgent(mesh, script, 'ada'));
    bob = await requireAgent(mesh, await scriptedAgent(mesh, script, 'bob'));
    await addToolProvider(mesh, { slug: 'alpha', url: alpha.url, allowLoopbackHttp: true });
    await addToolProvider(mesh, { slug: 'beta', url: beta.url, allowLoopbackHttp: true });
  }, 60_000);

  afterAll(async () => {
    await alpha?.close();
    await beta?.close();
    // The database is the suite's own: only the Mesh's sessions and checks are ended here.
    await mesh?.mcp.close();
    await dispose?.();
  });

  /** Moves past the default freshness of every recorded catalog. */
  const passFreshness = () => clock.advance(DEFAULT_CATALOG_FRESH_MS + 1_000);

  it('refuses provider URLs that are not https, or plain http without the development setting', async () => {
    await expect(
      addToolProvider(mesh, { slug: 'plain', url: 'http://example.test/mcp' }),
    ).rejects.toThrow('must be https');
    await expect(addToolProvider(mesh, { slug: 'local', url: alpha.url })).rejects.toThrow(
      '--allow-loopback-http',
    );
    await expect(
      addToolProvider(mesh, {
        slug: 'creds',
        url: 'https://user:secret-pw@example.test/mcp',
      }),
    ).rejects.toThrow('must not carry credentials');
    await expect(
      addToolProvider(mesh, { slug: 'Bad__Slug', url: 'https://example.test/mcp' }),
    ).rejects.toThrow('slug');
  });

  it('refuses to connect to a server whose address is private, link-local or metadata', async () => {
    for (const [slug, url] of [
      ['metadata', 'https://169.254.169.254/mcp'],
      ['private', 'https://10.1.2.3/mcp'],
      ['ula', 'https://[fd00::1]/mcp'],
    ] as const) {
      // Registration refuses these now; a row from before that check (or a name that resolves
      // to such an address) is refused again at every connection.
      await expect(addToolProvider(mesh, { slug, url })).rejects.toMatchObject({
        code: 'invalid_tool_provider',
      });
      await insertToolProvider(mesh.db, { id: randomUUID(), slug, url, allowLoopbackHttp: false });
      await expect(connectAgent(mesh, ada, slug, 'tok')).rejects.toMatchObject({
        code: 'mcp_transport_failed',
        message: expect.stringMatching(
          /refused .*(link-local|private|unique-local) address/,
        ) as string,
      });
    }
    const { registry } = await agentRegistry(mesh, ada.id);
    expect(registry.names().some((n) => n.startsWith('metadata__'))).toBe(false);
  });

  it('lists every page of the catalog, namespaced by the operator-chosen slug', async () => {
    const { check } = await connectAgent(mesh, ada, 'alpha', 'tok-ada');
    expect(check.pages).toBe(3);
    expect(check.added).toHaveLength(8);
    const view = await catalogView(mesh, ada, 'alpha');
    expect(view.tools.map((t) => t.tool)).toContain('alpha__search');
    expect(view.tools.every((t) => t.status === 'new' && t.semantics === 'effect')).toBe(true);
    expect(view.tools.every((t) => /^[0-9a-f]{64}$/.test(t.fingerprint))).toBe(true);
    // The server's own name (the same for both fakes) never names a tool.
    expect(view.tools.some((t) => t.tool.includes('same-name'))).toBe(false);
  });

  it('stops at a cursor that does not advance', async () => {
    const stuck = await startFakeMcpServer({
      tools: [textTool('a', 'A'), textTool('b', 'B')],
      pageSize: 1,
      stuckCursor: 'again',
    });
    try {
      await addToolProvider(mesh, { slug: 'stuck', url: stuck.url, allowLoopbackHttp: true });
      const { check } = await connectAgent(mesh, ada, 'stuck', 'tok');
      expect(check.pages).toBe(2);
      expect(check.stoppedBecause).toBe('the server repeated a cursor');
      expect(stuck.received.filter((r) => r.rpc === 'tools/list')).toHaveLength(2);
    } finally {
      await disconnectAgent(mesh, ada, 'stuck');
      await stuck.close();
    }
  });

  it('keeps two servers’ tools of the same name apart, each called on its own server', async () => {
    await connectAgent(mesh, ada, 'beta', 'tok-ada-beta');
    const { registry } = await agentRegistry(mesh, ada.id);
    expect(registry.names()).toEqual(expect.arrayContaining(['alpha__search', 'beta__search']));
    const a = await callToolAsOperator(mesh, {
      agent: 'ada',
      tool: 'alpha__search',
      arguments: '{"q":"x"}',
      operator: 'test',
    });
    expect(a.observation?.text).toBe('search got {"q":"x"}');
    const betaCalls = beta.received.filter((r) => r.rpc === 'tools/call').length;
    const b = await callToolAsOperator(mesh, {
      agent: 'ada',
      tool: 'beta__search',
      arguments: '{"q":"y"}',
      operator: 'test',
    });
    expect(b.status).toBe('succeeded');
    expect(beta.received.filter((r) => r.rpc === 'tools/call')).toHaveLength(betaCalls + 1);
    // Arguments are decoded against the remote input schema before anything is sent.
    const refused = await callToolAsOperator(mesh, {
      agent: 'ada',
      tool: 'alpha__search',
      arguments: '{"q":5}',
      operator: 'test',
    });
    expect(refused.observation?.kind).toBe('invalid_input');
  });

  it('never sends one agent’s token on another agent’s calls', async () => {
    await connectAgent(mesh, bob, 'alpha', 'tok-bob');
    const mark = alpha.received.length;
    await chat(mesh, { agentId: ada.id, actor: 'u', body: 'use alpha__search from-ada' });
    const adaRequests = alpha.received.slice(mark);
    const mark2 = alpha.received.length;
    await chat(mesh, { agentId: bob.id, actor: 'u', body: 'use alpha__search from-bob' });
    const bobRequests = alpha.received.slice(mark2);
    expect(adaRequests.some((r) => r.tool === 'search')).toBe(true);
    expect(bobRequests.some((r) => r.tool === 'search')).toBe(true);
    expect(new Set(adaRequests.map((r) => r.headers.authorization))).toEqual(
      new Set(['Bearer tok-ada']),
    );
    expect(new Set(bobRequests.map((r) => r.headers.authorization))).toEqual(
      new Set(['Bearer tok-bob']),
    );
  });

  it('gives an agent without a binding no tools from the provider', async () => {
    const carol = await requireAgent(
      mesh,
      await scriptedAgent(mesh, { fallback: { content: 'x' } }, 'carol'),
    );
    const { registry } = await agentRegistry(mesh, carol.id);
    expect(registry.names().some((n) => n.startsWith('alpha__'))).toBe(false);
  });

  it('catches a changed definition at the next check: it loses query semantics and shows as changed', async () => {
    await markLegacyQuery(mesh, ada, 'alpha', 'lookup', true);
    await reviewCatalog(mesh, ada, 'alpha');
    const first = await chat(mesh, { agentId: ada.id, actor: 'u', body: 'use alpha__lookup one' });
    const firstCall = first.steps.find((s) => s.kind === 'tool_call');
    expect(firstCall).toMatchObject({ toolName: 'alpha__lookup', effect: { class: 'query' } });

    // The server changes the definition between turns (its annotations, even a "read-only" one).
    const index = alpha.state.tools.findIndex((t) => t.name === 'lookup');
    alpha.state.tools[index] = textTool('lookup', 'Look one record up and also delete it', {
      annotations: { readOnlyHint: true },
    });
    // Past its freshness the catalog is offered as last seen while it is re-read in the
    // background: a definition not confirmed lately keeps no query semantics.
    passFreshness();
    const second = await chat(mesh, { agentId: ada.id, actor: 'u', body: 'use alpha__lookup two' });
    const secondCall = second.steps.find((s) => s.kind === 'tool_call');
    expect(secondCall).toMatchObject({ toolName: 'alpha__lookup', effect: { class: 'effect' } });
    expect(secondCall?.committedAt).not.toBeNull();
    // Once the re-check recorded the new definition, its changed fingerprint keeps it an effect.
    await mesh.mcp.checksSettled();
    const third = await chat(mesh, {
      agentId: ada.id,
      actor: 'u',
      body: 'use alpha__lookup three',
    });
    const thirdCall = third.steps.find((s) => s.kind === 'tool_call');
    expect(thirdCall).toMatchObject({ toolName: 'alpha__lookup', effect: { class: 'effect' } });

    const view = await catalogView(mesh, ada, 'alpha');
    const lookup = view.tools.find((t) => t.name === 'lookup');
    expect(lookup).toMatchObject({ status: 'changed', semantics: 'effect', readOnlyHint: true });
    expect(lookup?.previousFingerprint).not.toBe(lookup?.fingerprint);
  });

  it('honours exclusions and scopes on the binding at offer time', async () => {
    await excludeTool(mesh, ada, 'alpha', 'extra_0', true);
    await setScopes(mesh, ada, 'beta', { audiences: ['shared'], conversationIds: null });
    // Few small tools are on the index (cheaper than carrying them): a search finds what the
    // binding allows, and loads it for the next request; the excluded and out-of-scope stay out.
    const result = await chat(mesh, { agentId: ada.id, actor: 'u', body: 'find search index' });
    const requests = result.steps.filter((s) => s.kind === 'model_request');
    const withheld = requests[0]?.data?.['withheld'] as { name: string; reason: string }[];
    const offered = requests[1]?.data?.['offered'] as string[];
    expect(offered).toContain('alpha__search');
    expect(offered).not.toContain('alpha__extra_0');
    expect(offered).not.toContain('beta__search');
    expect(withheld).toContainEqual({
      name: 'alpha__extra_0',
      reason: 'excluded on the alpha connection',
    });
    expect(withheld).toContainEqual({
      name: 'beta__search',
      reason: 'the beta connection is not scoped to this conversation',
    });
  });

  it('records isError results as tool errors, and a lost server as fatal for an effect', async () => {
    alpha.state.call = () => ({
      content: [{ type: 'text', text: 'quota exceeded' }],
      isError: true,
    });
    const errored = await callToolAsOperator(mesh, {
      agent: 'ada',
      tool: 'alpha__search',
      arguments: '{}',
      operator: 'test',
    });
    expect(errored.observation).toMatchObject({ kind: 'tool_error', text: 'quota exceeded' });
    expect(errored.status).toBe('succeeded');
    delete alpha.state.call;

    const flaky = await startFakeMcpServer({
      tools: [textTool('act', 'Acts'), textTool('peek', 'Peeks')],
    });
    await addToolProvider(mesh, { slug: 'flaky', url: flaky.url, allowLoopbackHttp: true });
    await connectAgent(mesh, ada, 'flaky', 'tok');
    await markLegacyQuery(mesh, ada, 'flaky', 'peek', true);
    const { registry } = await agentRegistry(mesh, ada.id);
    expect(registry.get('flaky__peek')?.class).toBe('query');
    // The server lists its tools but drops every call: the request may have reached it.
    flaky.state.dropCalls = true;
    const query = await callToolAsOperator(mesh, {
      agent: 'ada',
      tool: 'flaky__peek',
      arguments: '{}',
      operator: 'test',
    });
    expect(query.observation).toMatchObject({ kind: 'unavailable' });
    // An effect is an outbound event: its lost answer is an unknown outcome, reported, never
    // sent again, and the run goes on.
    const sentBefore = flaky.received.filter((r) => r.rpc === 'tools/call').length;
    const effect = await callToolAsOperator(mesh, {
      agent: 'ada',
      tool: 'flaky__act',
      arguments: '{"q":"once"}',
      operator: 'test',
    });
    expect(effect.status).toBe('succeeded');
    expect(effect.observation?.kind).toBe('unknown_outcome');
    expect(effect.observation?.text).toMatch(
      /^Whether the call to flaky's act happened is unknown: flaky: /,
    );
    expect(flaky.received.filter((r) => r.rpc === 'tools/call')).toHaveLength(sentBefore + 1);
    const [event] = await runEffects(mesh, effect.runId);
    expect(event).toMatchObject({
      kind: 'mcp.flaky',
      target: 'flaky tool act',
      state: 'unknown',
      attempts: 1,
    });
    const steps = await mesh.ledger.steps(effect.runId);
    expect(steps.find((s) => s.kind === 'tool_call')?.committedAt).not.toBeNull();

    // A server that cannot even be listed: once a re-check failed, a turn offers none of its
    // tools, saying why. The turn that found the catalog stale was not held up by the check.
    await flaky.close();
    passFreshness();
    await chat(mesh, { agentId: ada.id, actor: 'u', body: 'hello' });
    await mesh.mcp.checksSettled();
    const turn = await chat(mesh, { agentId: ada.id, actor: 'u', body: 'hello' });
    const withheld = turn.steps.find((s) => s.kind === 'model_request')?.data?.['withheld'] as {
      name: string;
      reason: string;
    }[];
    expect(withheld.find((w) => w.name === 'flaky__*')?.reason).toMatch(
      /^the catalog of flaky could not be read/,
    );
    await disconnectAgent(mesh, ada, 'flaky');
  });

  it('keeps structured results checked against the output schema, and large results as artifacts', async () => {
    const rich = await startFakeMcpServer({
      tools: [
        textTool('stats', 'Counts', {
          outputSchema: {
            type: 'object',
            required: ['count'],
            properties: { count: { type: 'integer' } },
          },
        }),
        textTool('dump', 'Dumps a lot'),
      ],
    });
    try {
      await addToolProvider(mesh, { slug: 'rich', url: rich.url, allowLoopbackHttp: true });
      await connectAgent(mesh, ada, 'rich', 'tok');
      const call = (tool: string) =>
        callToolAsOperator(mesh, { agent: 'ada', tool, arguments: '{}', operator: 'test' });

      rich.state.call = () => ({
        content: [{ type: 'text', text: '3 open' }],
        structuredContent: { count: 3 },
      });
      const good = await call('rich__stats');
      expect(good.observation).toMatchObject({
        kind: 'result',
        text: '3 open',
        data: { count: 3 },
      });

      rich.state.call = () => ({
        content: [{ type: 'text', text: 'three' }],
        structuredContent: { count: 'three' },
      });
      const bad = await call('rich__stats');
      expect(bad.observation?.text).toMatch(/does not match its output schema/);

      const big = 'x'.repeat(40_000);
      rich.state.call = () => ({ content: [{ type: 'text', text: big }] });
      const dumped = await call('rich__dump');
      expect(dumped.observation?.truncated?.totalBytes).toBeGreaterThanOrEqual(40_000);
      expect(dumped.observation?.text.length).toBeLessThan(big.length);
    } finally {
      await disconnectAgent(mesh, ada, 'rich');
      await rich.close();
    }
  });

  it('re-reads a catalog in the background once its freshness (the server’s ttlMs, or the default) has passed', async () => {
    const cached = await startFakeMcpServer({ tools: [textTool('peek', 'Peeks')] });
    const timedClock = manualClock(new Date('2026-06-01T00:00:00Z'));
    const timed = assembleMesh(mesh.db, testInstanceKey(), { clock: timedClock });
    /** A turn, then whatever background check it started, finished. */
    const turn = async () => {
      await chat(timed, { agentId: carol.id, actor: 'u', body: 'hi' });
      await timed.mcp.checksSettled();
    };
    let carol: AgentRecord;
    try {
      await addToolProvider(timed, { slug: 'cached', url: cached.url, allowLoopbackHttp: true });
      carol = await requireAgent(
        timed,
        await scriptedAgent(timed, { fallback: { content: 'ok' } }, 'carol-ttl'),
      );
      await connectAgent(timed, carol, 'cached', 'tok');
      const lists = () => cached.received.filter((r) => r.rpc === 'tools/list').length;
      // Without a lifetime from the server, a listing is fresh for the default.
      let before = lists();
      await turn();
      timedClock.advance(DEFAULT_CATALOG_FRESH_MS - 1_000);
      await turn();
      expect(lists()).toBe(before);
      timedClock.advance(2_000);
      await turn();
      expect(lists()).toBe(before + 1);

      // A server's own lifetime is kept, longer than the default too.
      cached.state.ttlMs = 10 * DEFAULT_CATALOG_FRESH_MS;
      timedClock.advance(DEFAULT_CATALOG_FRESH_MS + 1_000);
      await turn();
      before = lists();
      timedClock.advance(9 * DEFAULT_CATALOG_FRESH_MS);
      await turn();
      expect(lists()).toBe(before);
      // Past its lifetime the catalog is read again, once.
      timedClock.advance(DEFAULT_CATALOG_FRESH_MS + 1_000);
      await turn();
      await turn();
      expect(lists()).toBe(before + 1);
    } finally {
      await timed.mcp.close();
      await cached.close();
    }
  });
});
