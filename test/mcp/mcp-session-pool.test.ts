import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAgent } from '../../src/app/agents/agents.ts';
import { catalogView, recheckCatalog } from '../../src/app/mcp/catalog.ts';
import { connectAgent, disconnectAgent } from '../../src/app/mcp/connections.ts';
import { bindingKey } from '../../src/app/mcp/credentials.ts';
import { addToolProvider } from '../../src/app/mcp/providers.ts';
import { DEFAULT_CATALOG_FRESH_MS } from '../../src/app/mcp/runtime.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { AgentRecord } from '../../src/run/records.ts';
import type { Db } from '../../src/store/db.ts';
import { findToolProvider } from '../../src/store/mcp.ts';
import { manualClock } from '../../src/tool/clock.ts';
import { testDatabases } from '../support/db.ts';
import {
  startStatefulMcpServer,
  statefulTool,
  type ReceivedRequest,
  type StatefulMcpServer,
} from '../support/mcp-stateful-server.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

const IDLE_MS = 10 * 60_000;

/** What a server received since `mark`. */
function since(server: StatefulMcpServer, mark: number): ReceivedRequest[] {
  return server.received.slice(mark);
}

const isPost = (rpc: string) => (r: ReceivedRequest) => r.http === 'POST' && r.rpc === rpc;

describe.each(testDatabases())('pooled MCP sessions on $name', (database) => {
  const clock = manualClock(new Date());
  // One key for every Mesh of the suite: they read each other's captured tokens.
  const instanceKey = testInstanceKey();
  let db: Db;
  let dispose: () => Promise<void>;
  let mesh: Mesh;
  const servers: StatefulMcpServer[] = [];

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
    mesh = meshOver(db);
  }, 60_000);

  afterAll(async () => {
    await mesh?.mcp.close();
    for (const s of servers) await s.close();
    await dispose?.();
  });

  /** A Mesh over the suite's database whose close ends its sessions but leaves the database. */
  function meshOver(
    shared: Db,
    onDbClose?: () => void,
    options: { catalogCheckDeadlineMs?: number } = {},
  ): Mesh {
    return assembleMesh(
      {
        ...shared,
        close: async () => {
          onDbClose?.();
        },
      },
      instanceKey,
      // No idle sweeps on a timer: the test moves the clock and asks for them.
      { clock, mcp: { sessionIdleMs: IDLE_MS, sessionSweepEveryMs: 0, ...options } },
    );
  }

  async function server(slug: string, tools = [statefulTool('search', `Search ${slug}`)]) {
    const s = await startStatefulMcpServer({ tools });
    servers.push(s);
    await addToolProvider(mesh, { slug, url: s.url, allowLoopbackHttp: true });
    return s;
  }

  async function agent(name: string): Promise<AgentRecord> {
    return requireAgent(mesh, await scriptedAgent(mesh, { fallback: { content: 'ok' } }, name));
  }

  const call = (on: Mesh, agentName: string, tool: string, q = 'x') =>
    callToolAsOperator(on, {
      agent: agentName,
      tool,
      arguments: JSON.stringify({ q }),
      operator: 'test',
    });

  it('reuses one session for calls and checks, and ends it with DELETE when idle, on disconnect and on close', async () => {
    const s = await server('pooled');
    const ada = await agent('ada-pool');
    await connectAgent(mesh, ada, 'pooled', 'tok');
    // Connecting tries the token on a session of its own, and ends it.
    const trial = s.received.find(isPost('initialize'));
    expect(trial?.opened).toBeDefined();
    expect(s.received.some((r) => r.http === 'DELETE' && r.sessionId === trial?.opened)).toBe(true);
    expect(s.sessions()).toEqual([]);

    let mark = s.received.length;
    expect((await call(mesh, 'ada-pool', 'pooled__search', 'one')).status).toBe('succeeded');
    await recheckCatalog(mesh, ada, 'pooled');
    expect((await call(mesh, 'ada-pool', 'pooled__search', 'two')).status).toBe('succeeded');
    const seen = since(s, mark);
    expect(seen.filter(isPost('initialize'))).toHaveLength(1);
    expect(seen.filter(isPost('tools/call'))).toHaveLength(2);
    expect(seen.filter(isPost('tools/list'))).toHaveLength(1);
    const first = seen.find(isPost('tools/call'))?.sessionId;
    expect(first).toBeDefined();
    expect(
      new Set(seen.filter((r) => r.rpc?.startsWith('tools/')).map((r) => r.sessionId)),
    ).toEqual(new Set([first]));
    expect(seen.some((r) => r.http === 'DELETE')).toBe(false);

    // Idle for less than the idle time: kept. Past it: ended with its id.
    clock.advance(IDLE_MS - 1_000);
    await mesh.mcp.sessions.closeIdle();
    expect(s.sessions()).toEqual([first]);
    clock.advance(2_000);
    await mesh.mcp.sessions.closeIdle();
    expect(
      since(s, mark)
        .filter((r) => r.http === 'DELETE')
        .map((r) => r.sessionId),
    ).toEqual([first]);
    expect(s.sessions()).toEqual([]);

    // The next call opens a new session; disconnecting ends it.
    mark = s.received.length;
    await call(mesh, 'ada-pool', 'pooled__search', 'three');
    const second = since(s, mark).find(isPost('tools/call'))?.sessionId;
    expect(second).not.toBe(first);
    await disconnectAgent(mesh, ada, 'pooled');
    expect(
      since(s, mark)
        .filter((r) => r.http === 'DELETE')
        .map((r) => r.sessionId),
    ).toEqual([second]);
    expect(mesh.mcp.sessions.keys()).not.toContain(
      bindingKey(ada.id, (await providerId('pooled')) ?? ''),
    );
    expect(s.sessions()).toEqual([]);

    // Closing a Mesh ends its sessions before its database is closed.
    const events: string[] = [];
    const closing = meshOver(db, () =>
      events.push(`db closed, server holds ${s.sessions().length}`),
    );
    await connectAgent(closing, ada, 'pooled', 'tok');
    await call(closing, 'ada-pool', 'pooled__search', 'four');
    expect(s.sessions()).toHaveLength(1);
    const third = s.sessions()[0];
    mark = s.received.length;
    await closing.close();
    expect(
      since(s, mark)
        .filter((r) => r.http === 'DELETE')
        .map((r) => r.sessionId),
    ).toEqual([third]);
    expect(events).toEqual(['db closed, server holds 0']);
    await disconnectAgent(mesh, ada, 'pooled');
  });

  it('shares one opening between concurrent first uses', async () => {
    const s = await server('together');
    const bea = await agent('bea-pool');
    await connectAgent(mesh, bea, 'together', 'tok');
    const mark = s.received.length;
    const results = await Promise.all([
      call(mesh, 'bea-pool', 'together__search', 'a'),
      call(mesh, 'bea-pool', 'together__search', 'b'),
      recheckCatalog(mesh, bea, 'together'),
    ]);
    expect(results[0].status).toBe('succeeded');
    expect(results[1].status).toBe('succeeded');
    expect(since(s, mark).filter(isPost('initialize'))).toHaveLength(1);
    await disconnectAgent(mesh, bea, 'together');
  });

  it('opens the session of a server a turn offers at the turn’s start, for its first call', async () => {
    const s = await server('warmed');
    const gil = await agent('gil-pool');
    await connectAgent(mesh, gil, 'warmed', 'tok');
    const key = bindingKey(gil.id, (await providerId('warmed')) ?? '');
    expect(mesh.mcp.sessions.keys()).not.toContain(key);
    const mark = s.received.length;
    // The model answers without calling anything: the session was opened all the same, while it
    // was asked.
    const turn = await chat(mesh, { agentId: gil.id, actor: 'u', body: 'hi' });
    expect(turn.status).toBe('succeeded');
    expect(mesh.mcp.sessions.keys()).toContain(key);
    // The call that follows uses it: one handshake in all.
    expect((await call(mesh, 'gil-pool', 'warmed__search')).status).toBe('succeeded');
    const seen = since(s, mark);
    const opened = seen.filter(isPost('initialize'));
    expect(opened).toHaveLength(1);
    expect(seen.find(isPost('tools/call'))?.sessionId).toBe(opened[0]?.opened);
    await disconnectAgent(mesh, gil, 'warmed');
  });

  it('does not hold a call to one server for another server’s hanging catalog check', async () => {
    const good = await server('healthy');
    const slow = await server('hanging');
    const cy = await agent('cy-pool');
    await connectAgent(mesh, cy, 'healthy', 'tok');
    await connectAgent(mesh, cy, 'hanging', 'tok');
    // The server still accepts connections but answers nothing from now on.
    slow.state.hang = true;
    const mark = slow.received.length;
    clock.advance(DEFAULT_CATALOG_FRESH_MS + 1_000);

    const events: string[] = [];
    const result = await call(mesh, 'cy-pool', 'healthy__search');
    events.push('healthy call finished');
    expect(result.observation?.text).toBe('search got {"q":"x"}');
    // The stale catalog of the hanging server is being re-read, off the call's path.
    const check = mesh.mcp.checks.get(bindingKey(cy.id, (await providerId('hanging')) ?? ''));
    expect(check).toBeDefined();
    const checked = check?.then(() => events.push('hanging check finished'));
    await slow.whenReceived((r) => slow.received.indexOf(r) >= mark && r.http === 'POST');
    expect(events).toEqual(['healthy call finished']);

    // Once its check fails, the hanging server's tools are withheld, with why; nothing else is.
    slow.releaseHung();
    await checked;
    expect(events).toEqual(['healthy call finished', 'hanging check finished']);
    slow.state.hang = false;
    const turn = await chat(mesh, { agentId: cy.id, actor: 'u', body: 'hi' });
    const request = turn.steps.find((s) => s.kind === 'model_request');
    expect(request?.data?.['offered']).toContain('healthy__search');
    expect(request?.data?.['offered']).not.toContain('hanging__search');
    const withheld = request?.data?.['withheld'] as { name: string; reason: string }[];
    expect(withheld.find((w) => w.name === 'hanging__*')?.reason).toMatch(
      /^the catalog of hanging could not be read/,
    );
    // The good server's catalog was re-read too, in the background.
    await mesh.mcp.checksSettled();
    expect(good.received.filter(isPost('tools/list')).length).toBeGreaterThanOrEqual(2);
    await disconnectAgent(mesh, cy, 'healthy');
    await disconnectAgent(mesh, cy, 'hanging');
  });

  it('counts a check that passes its deadline as failed, withholding only that server’s tools', async () => {
    const slow = await server('stalls');
    const fay = await agent('fay-pool');
    await connectAgent(mesh, fay, 'stalls', 'tok');
    const hasty = meshOver(db, undefined, { catalogCheckDeadlineMs: 50 });
    try {
      slow.state.hang = true;
      clock.advance(DEFAULT_CATALOG_FRESH_MS + 1_000);
      // Stale: offered as last seen while the check runs; the check then misses its deadline.
      const first = await chat(hasty, { agentId: fay.id, actor: 'u', body: 'hi' });
      expect(first.steps.find((s) => s.kind === 'model_request')?.data?.['offered']).toContain(
        'stalls__search',
      );
      await hasty.mcp.checksSettled();
      const second = await chat(hasty, { agentId: fay.id, actor: 'u', body: 'hi' });
      const withheld = second.steps.find((s) => s.kind === 'model_request')?.data?.['withheld'] as {
        name: string;
        reason: string;
      }[];
      expect(withheld.find((w) => w.name === 'stalls__*')?.reason).toMatch(
        /could not be read: the server did not list its tools within 50 ms/,
      );
      // Closing the Mesh abandons the opening still waiting on the hung server.
      const pending = hasty.mcp.sessions.keys();
      expect(pending).toHaveLength(1);
      await hasty.mcp.close();
      expect(hasty.mcp.sessions.keys()).toEqual([]);
    } finally {
      slow.releaseHung();
      slow.state.hang = false;
      await hasty.mcp.close();
    }
    await disconnectAgent(mesh, fay, 'stalls');
  });

  it('opens a new session when the server dropped its own, and never re-sends a call that may have run', async () => {
    const s = await server('restarts');
    const dee = await agent('dee-pool');
    await connectAgent(mesh, dee, 'restarts', 'tok');
    await call(mesh, 'dee-pool', 'restarts__search', 'before');
    const old = s.sessions()[0];
    expect(old).toBeDefined();

    // The server forgets every session (a restart): the next call meets 404 on the old id.
    s.forgetSessions();
    let mark = s.received.length;
    const after = await call(mesh, 'dee-pool', 'restarts__search', 'after');
    expect(after.observation?.text).toBe('search got {"q":"after"}');
    const calls = since(s, mark).filter(isPost('tools/call'));
    expect(calls.map((r) => [r.sessionId === old, r.status])).toEqual([
      [true, 404],
      [false, 200],
    ]);
    expect(since(s, mark).filter(isPost('initialize'))).toHaveLength(1);

    // The same for a catalog check.
    s.forgetSessions();
    mark = s.received.length;
    await recheckCatalog(mesh, dee, 'restarts');
    expect(
      since(s, mark)
        .filter(isPost('tools/list'))
        .map((r) => r.status),
    ).toEqual([404, 200]);

    // A call whose connection is lost after the server received it is not sent again.
    s.state.dropCalls = true;
    mark = s.received.length;
    const lost = await call(mesh, 'dee-pool', 'restarts__search', 'lost');
    expect(lost.observation?.kind).toBe('unknown_outcome');
    expect(since(s, mark).filter(isPost('tools/call'))).toHaveLength(1);
    s.state.dropCalls = false;
    // The session it was lost on is not trusted again: the next call opens another.
    mark = s.received.length;
    await call(mesh, 'dee-pool', 'restarts__search', 'again');
    expect(since(s, mark).filter(isPost('initialize'))).toHaveLength(1);
    await disconnectAgent(mesh, dee, 'restarts');
  });

  it('re-reads the catalog when the server says its tool list changed on the pooled session', async () => {
    const s = await server('changing');
    const eve = await agent('eve-pool');
    await connectAgent(mesh, eve, 'changing', 'tok');
    await call(mesh, 'eve-pool', 'changing__search');
    const mark = s.received.length;
    s.state.tools = [...s.state.tools, statefulTool('fetch', 'Fetches one')];
    await s.notifyToolsChanged();
    await s.whenReceived((r) => s.received.indexOf(r) >= mark && isPost('tools/list')(r));
    await mesh.mcp.checksSettled();
    const view = await catalogView(mesh, eve, 'changing');
    expect(view.tools.map((t) => t.name).sort()).toEqual(['fetch', 'search']);
    // The re-read used the pooled session: no new one was opened for it.
    expect(since(s, mark).filter(isPost('initialize'))).toHaveLength(0);
    await disconnectAgent(mesh, eve, 'changing');
  });

  async function providerId(slug: string): Promise<string | undefined> {
    return (await findToolProvider(mesh.db, slug))?.id;
  }
});
