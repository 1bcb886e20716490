import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeFor } from '../../src/app/runs/operator-call.ts';
import { runEffects } from '../../src/app/runs/outbound-view.ts';
import { agentRegistry } from '../../src/app/packages/policy.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import type { RunRecord } from '../../src/run/records.ts';
import { invoke, resolveCall } from '../../src/tool/executor.ts';
import { testDatabases } from '../support/db.ts';
import { textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { openRemoteAgent, type RemoteAgent } from '../support/remote-agent.ts';

/**
 * A remote tool with effect semantics is an outbound event like a first-party effect: a row
 * recorded before the call is sent, with its delivery state, shown with the run; a call invoked
 * again for the same step (a run resumed past its commit boundary) reports what was recorded and
 * is never sent twice.
 */
describe.each(testDatabases())('remote MCP effects as outbound events, on $name', (database) => {
  let remote: RemoteAgent;
  let mesh: Mesh;
  let server: FakeMcpServer;
  let agentId: string;
  let run: RunRecord;

  beforeAll(async () => {
    remote = await openRemoteAgent(database, {
      slug: 'chat',
      server: { tools: [textTool('post', 'Posts a message')] },
    });
    ({ mesh, server, agentId } = remote);
    run = await mesh.ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: { maxToolCalls: 10 },
      checkpoint: scriptCheckpoint([]),
    });
  }, 60_000);

  afterAll(() => remote?.close());

  /** Invokes chat__post as the run's call `callId` at `step`, as the run's driver would. */
  const post = async (callId: string, step: number, text: string) => {
    const { registry } = await agentRegistry(mesh, agentId);
    const call = { id: callId, name: 'chat__post', arguments: JSON.stringify({ q: text }) };
    const resolved = resolveCall(registry, call);
    if (resolved.kind !== 'ready') throw new Error(`not ready: ${resolved.kind}`);
    expect(resolved.definition).toMatchObject({
      class: 'effect',
      needs: ['service:mesh.outbound'],
    });
    const runtime = runtimeFor(mesh, run, new AbortController().signal);
    return (await invoke(resolved.definition, resolved.args, call, runtime, step)).observation;
  };
  const calls = () => server.received.filter((r) => r.rpc === 'tools/call').length;

  it('records the call as an outbound event, delivered, and a resumed call sends nothing', async () => {
    const before = calls();
    const first = await post('call_a', 1, 'hello');
    expect(first.text).toBe('post got {"q":"hello"}');
    expect(calls()).toBe(before + 1);
    const again = await post('call_a', 1, 'hello');
    expect(again.text).toBe(
      'post got {"q":"hello"} (delivered by an earlier attempt of this call; not sent again)',
    );
    expect(calls()).toBe(before + 1);
    const events = (await runEffects(mesh, run.id)).filter((e) => e.callId === 'call_a');
    expect(events).toMatchObject([
      { kind: 'mcp.chat', target: 'chat tool post', state: 'delivered', attempts: 1 },
    ]);
  });

  it('reports a lost answer as unknown, and never sends the call again', async () => {
    server.state.dropCalls = true;
    const before = calls();
    const lost = await post('call_b', 2, 'maybe');
    expect(lost.kind).toBe('unknown_outcome');
    expect(lost.text).toMatch(/^Whether the call to chat's post happened is unknown: chat: /);
    expect(calls()).toBe(before + 1);
    server.state.dropCalls = false;
    // Resumed past the commit boundary: the recorded outcome is reported, nothing is sent.
    const resumed = await post('call_b', 2, 'maybe');
    expect(resumed.kind).toBe('unknown_outcome');
    expect(calls()).toBe(before + 1);
    const [event] = (await runEffects(mesh, run.id)).filter((e) => e.callId === 'call_b');
    expect(event).toMatchObject({ state: 'unknown', attempts: 1 });
    // Another call id in a later step is another effect, sent once.
    expect((await post(`call_${randomUUID().slice(0, 6)}`, 3, 'next')).text).toBe(
      'post got {"q":"next"}',
    );
    expect(calls()).toBe(before + 2);
  });
});
