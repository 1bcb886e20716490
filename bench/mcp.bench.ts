/**
 * bench:mcp — one remote MCP call (server-everything's `echo`, the reference server started from
 * its package on 127.0.0.1) made through Mesh, against the same call made directly with the
 * official SDK client (`@modelcontextprotocol/client` v2, the client Mesh itself uses) over one
 * session, measured in the same run, per call: median and p95.
 *
 * Two Mesh figures, since they differ in kind:
 *  - the executor path: the remote definition run by `execute` (decode and validate the
 *    arguments, the call on the binding's pooled session as the agent's account, type the result),
 *    for an agent whose operator marked `echo` a query (an effect needs a run's recorded step);
 *  - the operator call: `callToolAsOperator`, what `mesh tools call` runs, with effect semantics
 *    (an outbound event recorded before it is sent, its delivery stored) — the offer is
 *    computed, and the call is a durable run (run, commit stamp, observation, settle) on the
 *    embedded PGlite in a data directory, as `mesh` keeps it. The offer comes from the recorded
 *    catalog (a stale one is re-read in the background, never on the call's path).
 * A reference line, the direct client opening a new session for each call, shows what a session
 * costs on its own. The variants are measured in interleaved rounds, so load from other work on
 * the machine falls on all of them alike.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createAgent } from '../src/app/agents/agents.ts';
import { markLegacyQuery } from '../src/app/mcp/catalog.ts';
import { connectAgent } from '../src/app/mcp/connections.ts';
import { addToolProvider } from '../src/app/mcp/providers.ts';
import { assembleMesh } from '../src/app/compose.ts';
import { callToolAsOperator } from '../src/app/runs/operator-call.ts';
import { agentConfig, agentRegistry } from '../src/app/packages/policy.ts';
import { InstanceKey } from '../src/secrets/instance-key.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/pglite.ts';
import type { ToolRuntime } from '../src/tool/context.ts';
import { execute } from '../src/tool/executor.ts';
import { startThirdPartyMcpServer } from '../test/support/third-party-mcp.ts';
import { percentile } from './stats.ts';

const CALLS = Number(process.env['BENCH_CALLS'] ?? '200');
const ROUNDS = 10;
const WARMUP = 10;
const MESSAGE = 'hello from the bench';
const EXPECTED = `Echo: ${MESSAGE}`;

const server = await startThirdPartyMcpServer({
  entry: join('node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'),
  args: ['streamableHttp'],
  portVariable: 'PORT',
});
const home = mkdtempSync(join(tmpdir(), 'mesh-bench-mcp-'));
const db = await openPglite({ dataDir: join(home, 'pgdata') });
const direct = new Client({ name: 'bench-direct', version: '0.0.0' });

try {
  await migrate(db);
  const mesh = assembleMesh(db, new InstanceKey(randomBytes(32)));
  const agent = await createAgent(mesh, { name: 'bench' });
  await addToolProvider(mesh, { slug: 'ev', url: server.url, allowLoopbackHttp: true });
  // server-everything takes no credential; Mesh sends the agent's token and it is ignored.
  await connectAgent(mesh, agent, 'ev', 'unused-by-this-server');

  // The executor path is measured on a tool with query semantics: an effect is an outbound
  // event, which needs the call's recorded step in a durable run (the operator call below).
  // An operator marks a read-only remote tool so while its reviewed definition is unchanged.
  const reader = await createAgent(mesh, { name: 'bench-reader' });
  await connectAgent(mesh, reader, 'ev', 'unused-by-this-server');
  await markLegacyQuery(mesh, reader, 'ev', 'echo', true);

  const args = JSON.stringify({ message: MESSAGE });
  const { registry } = await agentRegistry(mesh, reader.id);
  const echo = registry.get('ev__echo');
  if (echo?.class !== 'query') throw new Error('ev__echo is not offered as a query to the reader');
  const runtime: ToolRuntime = {
    agentId: reader.id,
    runId: randomUUID(),
    provenance: { kind: 'operator', operator: 'bench' },
    signal: new AbortController().signal,
    services: mesh.services,
    configFor: await agentConfig(mesh, reader.id),
  };

  await direct.connect(new StreamableHTTPClientTransport(new URL(server.url)));

  const textOf = (result: { content?: unknown }) =>
    ((result.content as { type: string; text?: string }[] | undefined) ?? [])
      .map((b) => b.text ?? '')
      .join('');
  const check = (label: string, text: string | undefined) => {
    if (text !== EXPECTED) throw new Error(`${label} answered ${JSON.stringify(text)}`);
  };

  const variants: { label: string; call: () => Promise<void>; times: number[] }[] = [
    {
      label: 'direct SDK client, one session',
      times: [],
      call: async () => {
        check(
          'direct',
          textOf(await direct.callTool({ name: 'echo', arguments: { message: MESSAGE } })),
        );
      },
    },
    {
      label: 'direct SDK client, a session per call',
      times: [],
      call: async () => {
        const c = new Client({ name: 'bench-direct', version: '0.0.0' });
        await c.connect(new StreamableHTTPClientTransport(new URL(server.url)));
        try {
          check(
            'direct per call',
            textOf(await c.callTool({ name: 'echo', arguments: { message: MESSAGE } })),
          );
        } finally {
          await c.close();
        }
      },
    },
    {
      label: 'Mesh executor path (execute)',
      times: [],
      call: async () => {
        const r = await execute(
          registry,
          { id: randomUUID(), name: 'ev__echo', arguments: args },
          runtime,
        );
        check(
          'executor',
          r.observation.kind === 'result' ? r.observation.text : r.observation.kind,
        );
      },
    },
    {
      label: 'Mesh operator call (durable run)',
      times: [],
      call: async () => {
        const r = await callToolAsOperator(mesh, {
          agent: 'bench',
          tool: 'ev__echo',
          arguments: args,
          operator: 'bench',
        });
        check('operator call', r.observation?.kind === 'result' ? r.observation.text : r.status);
      },
    },
  ];

  for (const v of variants) for (let i = 0; i < WARMUP; i++) await v.call();
  const perRound = Math.max(1, Math.ceil(CALLS / ROUNDS));
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      for (let i = 0; i < perRound; i++) {
        const t0 = performance.now();
        await v.call();
        v.times.push(performance.now() - t0);
      }
    }
  }

  const p = (xs: number[], q: number) => percentile([...xs], q);
  const [oneSession, perCall] = variants;
  if (!oneSession || !perCall) throw new Error('no reference variants');
  const width = Math.max(...variants.map((v) => v.label.length));
  console.log(
    `server-everything echo on 127.0.0.1, ${perRound * ROUNDS} calls per variant in ${ROUNDS} interleaved rounds (${WARMUP} warm-up calls each)`,
  );
  for (const v of variants) {
    const median = p(v.times, 50);
    const ratios =
      v === oneSession
        ? ''
        : `  x${(median / p(oneSession.times, 50)).toFixed(2)} direct (one session)` +
          (v === perCall
            ? ''
            : `  x${(median / p(perCall.times, 50)).toFixed(2)} direct (a session per call)`);
    console.log(
      `${v.label.padEnd(width)}  median ${median.toFixed(2).padStart(7)} ms  p95 ${p(v.times, 95).toFixed(2).padStart(7)} ms${ratios}`,
    );
  }
  console.log(
    'target: Mesh / direct (one session) <= 1.3x (medians) for the executor path; the operator call adds a durable run on embedded PGlite',
  );
} finally {
  await direct.close().catch(() => undefined);
  await db.close();
  await server.close();
  rmSync(home, { recursive: true, force: true });
}
