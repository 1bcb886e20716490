import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { callToolAsOperator, operatorCallDriver } from '../../src/app/runs/operator-call.ts';
import { turnPolicy } from '../../src/app/packages/policy.ts';
import {
  workspaceAdmin,
  describeWorkspaces,
  grantBackend,
} from '../../src/app/backends/workspace-admin.ts';
import { driveHeldRun } from '../../src/run/held-run.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';
import { insertAgent } from '../../src/store/agents.ts';

/** An observation's text, or '' when there is none. */
function textOf(observation: Readonly<Record<string, unknown>> | undefined): string {
  const text = observation?.['text'];
  return typeof text === 'string' ? text : '';
}

/*
 * The workspace verbs end to end over a real local (bubblewrap) workspace: provisioned on the
 * run's first call, a failing command as content, long output clamped with an artifact, files in
 * and out, refusals as observations, compute metered into the run and its budget, and the
 * workspace released when the run ends (or reaped when its run died).
 */
describe.each(testDatabases())('workspace tools on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let dir: string;
  const agent = `ws-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = async () => {
      // The database is the test's to close (and, on PostgreSQL, to drop).
      await mesh.workspaces.close();
      await opened.dispose();
    };
    dir = mkdtempSync(join(tmpdir(), 'mesh-wst-'));
    await insertAgent(mesh.db, { id: randomUUID(), name: agent });
    await insertAgent(mesh.db, { id: randomUUID(), name: `${agent}-none` });
    await mesh.db.query(
      `insert into execution_backends (id, name, kind, development, settings)
       values ($1, 'dev-local', 'local', true, $2::jsonb)`,
      [randomUUID(), JSON.stringify({ directory: join(dir, 'w') })],
    );
    await grantBackend(mesh, { agent, backend: 'dev-local', allowHosts: [], operator: 'test' });
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (tool: string, args: object) =>
    callToolAsOperator(mesh, {
      agent,
      tool,
      arguments: JSON.stringify(args),
      operator: 'test',
    });

  const agentId = async (name = agent) =>
    (await mesh.db.query<{ id: string }>('select id from agents where name = $1', [name])).rows[0]!
      .id;

  /** The states of a run's workspace rows. */
  const workspaceStates = async (runId: string) =>
    (
      await mesh.db.query<{ state: string }>('select state from workspaces where run_id = $1', [
        runId,
      ])
    ).rows;

  /** A run's observations by the id of the call they answer. */
  const observationsByCall = async (runId: string) =>
    new Map(
      (await mesh.ledger.steps(runId)).flatMap((s) =>
        s.kind === 'observation' ? [[s.callId, s.observation]] : [],
      ),
    );

  /** A script run of `calls` under its own lease, driven here to its end. */
  const driveScript = async (
    calls: Parameters<typeof scriptCheckpoint>[0],
    budget: Record<string, number>,
    owner: string,
  ) => {
    const run = await mesh.ledger.createRun({
      agentId: await agentId(),
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget,
      checkpoint: scriptCheckpoint(calls),
      lease: { owner, leaseMs: 30_000 },
    });
    const end = await driveHeldRun(mesh.ledger, operatorCallDriver(mesh), run, {
      runId: run.id,
      owner,
      epoch: run.leaseEpoch,
    });
    return { run, end };
  };

  it('refuses a local backend without the development setting, and an unknown kind', async () => {
    const refused = await workspaceAdmin
      .add(mesh, { name: 'prod-local', kind: 'local' })
      .catch((e: unknown) => e);
    expect(hasCode(refused, 'development_only')).toBe(true);
    const unknown = await workspaceAdmin
      .add(mesh, { name: 'k8s', kind: 'kubernetes' })
      .catch((e: unknown) => e);
    expect(hasCode(unknown, 'invalid_backend')).toBe(true);
    const noKey = await workspaceAdmin
      .add(mesh, { name: 'e', kind: 'e2b' })
      .catch((e: unknown) => e);
    expect(String((noKey as Error).message)).toMatch(/API key/);
  });

  it('withholds the workspace verbs from an agent with no backend, with the reason', async () => {
    const policy = await turnPolicy(mesh, await agentId(`${agent}-none`), 'direct');
    expect(policy.registry.get('workspace_exec')).toBeUndefined();
    expect(policy.withheld).toContainEqual({
      name: 'workspace_exec',
      reason: 'needs a workspace backend; none is configured',
    });
  });

  it('reports a failing command as content: exit code and both streams', async () => {
    const result = await call('workspace_exec', {
      command: 'echo out; echo err >&2; exit 3',
    });
    expect(result.status).toBe('succeeded');
    expect(result.observation?.kind).toBe('result');
    expect(result.observation?.text).toContain('exit code 3');
    expect(result.observation?.text).toContain('out');
    expect(result.observation?.text).toContain('err');
    expect(result.observation?.data).toMatchObject({ exit_code: 3, timed_out: false });
    // The workspace went with its run.
    const rows = await mesh.db.query<{ state: string; compute: number }>(
      'select state, compute_ms::float8 as compute from workspaces where run_id = $1',
      [result.runId],
    );
    expect(rows.rows.map((r) => r.state)).toEqual(['released']);
    expect(rows.rows[0]!.compute).toBeGreaterThan(0);
    const usage = await mesh.db.query<{ usage: { computeMs: number } }>(
      'select usage from runs where id = $1',
      [result.runId],
    );
    expect(usage.rows[0]!.usage.computeMs).toBeGreaterThan(0);
  });

  it('clamps long output with head and tail kept and stores the whole of it', async () => {
    const result = await call('workspace_exec', {
      command: 'echo FIRST; seq 1 20000; echo LAST',
    });
    const text = result.observation?.text ?? '';
    expect(text).toContain('FIRST');
    expect(text).toContain('LAST');
    expect(text).toMatch(/bytes omitted; the whole output is artifact/);
    expect(result.observation?.artifacts?.[0]).toMatchObject({ kind: 'resource' });
  });

  it('writes, reads and refuses paths outside the root, within one run’s workspace', async () => {
    const { run, end } = await driveScript(
      [
        {
          id: 'w1',
          name: 'workspace_write_file',
          arguments: '{"path":"src/a.txt","content":"hello"}',
        },
        { id: 'r1', name: 'workspace_exec', arguments: '{"command":"cat a.txt","cwd":"src"}' },
        { id: 'r2', name: 'workspace_read_file', arguments: '{"path":"src/a.txt"}' },
        {
          id: 'b1',
          name: 'workspace_write_file',
          arguments: '{"path":"bin.dat","content":"AAEC/w==","encoding":"base64"}',
        },
        { id: 'b2', name: 'workspace_read_file', arguments: '{"path":"bin.dat"}' },
        {
          id: 'x1',
          name: 'workspace_write_file',
          arguments: '{"path":"../../etc/x","content":"no"}',
        },
        { id: 'x2', name: 'workspace_read_file', arguments: '{"path":"/etc/passwd"}' },
        { id: 'x3', name: 'workspace_read_file', arguments: '{"path":"missing.txt"}' },
      ],
      { maxToolCalls: 8, maxRounds: 1 },
      'test-owner',
    );
    expect(end.status).toBe('succeeded');
    const obs = await observationsByCall(run.id);
    expect(textOf(obs.get('r1'))).toContain('hello');
    expect(obs.get('r2')?.['text']).toBe('hello');
    expect(textOf(obs.get('b2'))).toMatch(/binary file of 4 bytes/);
    expect(obs.get('x1')?.['kind']).toBe('invalid_input');
    expect(textOf(obs.get('x1'))).toMatch(/leaves the workspace root/);
    expect(obs.get('x2')?.['kind']).toBe('invalid_input');
    expect(textOf(obs.get('x3'))).toMatch(/no such file/);
    // One workspace for the whole run, released at its end.
    expect(await workspaceStates(run.id)).toEqual([{ state: 'released' }]);
  });

  it('survives a command that attacks the control channel: the workspace is stopped, the run says why', async () => {
    const { run, end } = await driveScript(
      [
        // The old attack: replace the agent's control socket with one of the command's own.
        {
          id: 'a1',
          name: 'workspace_exec',
          arguments: JSON.stringify({
            command:
              'rm -f /run/mesh/control.sock /run/mesh/egress.sock; touch /run/mesh/x; echo done',
          }),
        },
        // The channel is the agent's standard input and output: a command tries to write into
        // them through /proc (they are sockets, which /proc does not open), then kills the agent.
        {
          id: 'a2',
          name: 'workspace_exec',
          arguments: JSON.stringify({
            command: 'printf "{\\"id\\":1,\\"t\\":\\"exit\\"}\\n" > /proc/2/fd/1; echo still',
          }),
        },
        { id: 'a3', name: 'workspace_exec', arguments: '{"command":"kill -9 2; sleep 5"}' },
        { id: 'a4', name: 'workspace_exec', arguments: '{"command":"echo after"}' },
      ],
      { maxToolCalls: 4, maxRounds: 1 },
      'attack-owner',
    );
    // The run ended as runs end: this process was never thrown at.
    expect(end.status).toBe('succeeded');
    const obs = await observationsByCall(run.id);
    // /run/mesh is read-only inside: nothing there can be removed or replaced.
    expect(textOf(obs.get('a1'))).toMatch(/Read-only file system/);
    expect(textOf(obs.get('a2'))).toMatch(/cannot create \/proc\/2\/fd\/1: No such device/);
    expect(textOf(obs.get('a2'))).toContain('still');
    expect(textOf(obs.get('a3'))).toMatch(
      /^The workspace is unavailable: the sandbox agent stopped answering; the workspace was stopped/,
    );
    expect(textOf(obs.get('a4'))).toMatch(/^The workspace is unavailable/);
    // The next run gets a new workspace, and it works.
    expect((await call('workspace_exec', { command: 'echo fresh' })).observation?.text).toContain(
      'fresh',
    );
  });

  it('ends a run whose compute budget is spent, with the reason, and releases its workspace', async () => {
    const { run, end } = await driveScript(
      [
        {
          id: 'c1',
          name: 'workspace_exec',
          arguments: '{"command":"sleep 5","timeout_seconds":30}',
        },
        { id: 'c2', name: 'workspace_exec', arguments: '{"command":"echo never"}' },
      ],
      { maxToolCalls: 8, maxRounds: 1, maxComputeSeconds: 1 },
      'test-owner-2',
    );
    expect(end).toEqual({
      status: 'budget_exhausted',
      reason: 'budget exhausted: compute (1 s) spent',
    });
    const steps = await mesh.ledger.steps(run.id);
    // The command was cut at the budget's edge, not at its own 30 s timeout.
    const first = steps.find((s) => s.kind === 'observation');
    expect(textOf(first?.kind === 'observation' ? first.observation : undefined)).toMatch(/killed/);
    // The second call was stamped with its round and never ran: it says so, and nothing ran.
    expect(
      steps.filter((s) => s.kind === 'tool_call').map((s) => `${s.callId}:${s.status}`),
    ).toEqual(['c1:completed', 'c2:refused']);
    const second = steps.find((s) => s.kind === 'observation' && s.callId === 'c2');
    expect(second?.kind === 'observation' && second.observation['kind']).toBe('not_run');
    expect(await workspaceStates(run.id)).toEqual([{ state: 'released' }]);
  });

  it('reaps a workspace whose run died with its holder, and lists live ones meanwhile', async () => {
    const run = await mesh.ledger.createRun({
      agentId: await agentId(),
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: { maxToolCalls: 1, maxRounds: 1 },
      checkpoint: scriptCheckpoint([]),
      lease: { owner: 'holder-that-dies', leaseMs: 30_000 },
    });
    const session = await mesh.workspaces.forCall({
      agentId: run.agentId,
      runId: run.id,
      callId: 'c',
      toolName: 'workspace_exec',
      provenance: { kind: 'operator', operator: 'test' },
      signal: new AbortController().signal,
      services: mesh.services,
      config: {},
      secret: () => Promise.reject(new Error('no secrets here')),
      fetch: () => Promise.reject(new Error('no HTTP here')),
    });
    await session.writeFile('left-behind.txt', Buffer.from('x'));
    const listed = await describeWorkspaces(mesh);
    expect(listed.workspaces.map((w) => w.run)).toContain(run.id);
    expect(listed.backends.find((b) => b.name === 'dev-local')?.development).toBe(true);
    const row = await mesh.db.query<{ external_id: string }>(
      'select external_id from workspaces where run_id = $1',
      [run.id],
    );
    const folder = join(dir, 'w', row.rows[0]!.external_id);
    expect(existsSync(folder)).toBe(true);
    // Nothing to reap while the holder's lease is current.
    expect(await mesh.workspaces.reap()).toBe(0);
    // The holder dies: its lease lapses.
    await mesh.db.query(
      `update runs set lease_expires_at = now() - interval '10 minutes' where id = $1`,
      [run.id],
    );
    expect(await mesh.workspaces.reap()).toBe(1);
    expect(existsSync(folder)).toBe(false);
    const state = await mesh.db.query<{ state: string; release_reason: string }>(
      'select state, release_reason from workspaces where run_id = $1',
      [run.id],
    );
    expect(state.rows[0]).toMatchObject({ state: 'released' });
    expect(state.rows[0]!.release_reason).toMatch(/reaped/);
  });
});
