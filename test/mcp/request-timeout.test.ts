import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setToolProviderTimeoutSeconds } from '../../src/app/mcp/providers.ts';
import { testDatabases } from '../support/db.ts';
import { textTool } from '../support/mcp-server.ts';
import { openRemoteAgent, type RemoteAgent } from '../support/remote-agent.ts';

/**
 * A server's request timeout is the operator's setting, on every call: it was lost after a
 * restart (the bindings were read without it, so every call waited the default 60 s), and a new
 * one reached neither the compiled definitions nor the pooled session until a restart.
 */
describe.each(testDatabases())('a remote server’s request timeout, on $name', (database) => {
  let remote: RemoteAgent;

  beforeAll(async () => {
    remote = await openRemoteAgent(database, {
      slug: 'slow',
      timeoutSeconds: 1,
      server: {
        tools: [textTool('slow', 'Answers after the delay it is given')],
        call: async (name, args) => {
          await sleep(Number(args['q']));
          return { content: [{ type: 'text', text: `${name} done` }] };
        },
      },
    });
  }, 60_000);

  afterAll(() => remote?.close());

  const call = (delayMs: number) => remote.call('slow__slow', { q: String(delayMs) });

  it('applies a changed timeout to the next call, on the session already open', async () => {
    expect((await call(0)).observation?.text).toBe('slow done');
    // An effect that may have reached the server is an unknown outcome: reported, not retried.
    const late = await call(1500);
    expect(late.observation?.kind).toBe('unknown_outcome');
    expect(late.observation?.text).toContain('did not answer within 1 s');
    await setToolProviderTimeoutSeconds(remote.mesh, 'slow', 5);
    const patient = await call(1500);
    expect(patient.status).toBe('succeeded');
    expect(patient.observation?.text).toBe('slow done');
  });

  it('keeps the timeout across a restart', async () => {
    await setToolProviderTimeoutSeconds(remote.mesh, 'slow', 1);
    // A new Mesh over the same database: what a restarted server reads.
    await remote.restart();
    const late = await call(1500);
    expect(late.observation?.text).toContain('did not answer within 1 s');
  });
});
