import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAgent } from '../../src/app/agents.ts';
import { connectAgent } from '../../src/app/mcp-connections.ts';
import { addToolProvider, setToolProviderTimeoutSeconds } from '../../src/app/mcp-providers.ts';
import { callToolAsOperator } from '../../src/app/operator-call.ts';
import { assembleMesh, type Mesh } from '../../src/app/mesh.ts';
import type { InstanceKey } from '../../src/secrets/index.ts';
import type { Db } from '../../src/store/db.ts';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

/**
 * A server's request timeout is the operator's setting, on every call: it was lost after a
 * restart (the bindings were read without it, so every call waited the default 60 s), and a new
 * one reached neither the compiled definitions nor the pooled session until a restart.
 */
describe.each(testDatabases())('a remote server’s request timeout, on $name', (database) => {
  let db: Db;
  let key: InstanceKey;
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let server: FakeMcpServer;

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
    key = testInstanceKey();
    mesh = assembleMesh(db, key);
    server = await startFakeMcpServer({
      tools: [textTool('slow', 'Answers after the delay it is given')],
      call: async (name, args) => {
        await sleep(Number(args['q']));
        return { content: [{ type: 'text', text: `${name} done` }] };
      },
    });
    const agent = await requireAgent(
      mesh,
      await scriptedAgent(mesh, { fallback: { content: 'x' } }, 'ada'),
    );
    await addToolProvider(mesh, {
      slug: 'slow',
      url: server.url,
      allowLoopbackHttp: true,
      timeoutSeconds: 1,
    });
    await connectAgent(mesh, agent, 'slow', 'tok');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await mesh?.mcp.close();
    await dispose?.();
  });

  const call = (on: Mesh, delayMs: number) =>
    callToolAsOperator(on, {
      agent: 'ada',
      tool: 'slow__slow',
      arguments: JSON.stringify({ q: String(delayMs) }),
      operator: 'test',
    });

  it('applies a changed timeout to the next call, on the session already open', async () => {
    expect((await call(mesh, 0)).observation?.text).toBe('slow done');
    // An effect that may have reached the server is an unknown outcome: reported, not retried.
    const late = await call(mesh, 1500);
    expect(late.observation?.kind).toBe('unknown_outcome');
    expect(late.observation?.text).toContain('did not answer within 1 s');
    await setToolProviderTimeoutSeconds(mesh, 'slow', 5);
    const patient = await call(mesh, 1500);
    expect(patient.status).toBe('succeeded');
    expect(patient.observation?.text).toBe('slow done');
  });

  it('keeps the timeout across a restart', async () => {
    await setToolProviderTimeoutSeconds(mesh, 'slow', 1);
    await mesh.mcp.close();
    // A new Mesh over the same database: what a restarted server reads.
    mesh = assembleMesh(db, key);
    const late = await call(mesh, 1500);
    expect(late.observation?.text).toContain('did not answer within 1 s');
  });
});
