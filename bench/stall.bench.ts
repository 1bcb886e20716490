/**
 * bench:stall — how long the worst token-counting inputs hold the server's event loop: a 99 KB
 * message without spaces, and a turn that prices a 100 KB remote tool description. Each runs on
 * `mesh serve`'s HTTP server over the embedded database while `GET /api/agents` is sent again and
 * again; printed are the event loop's longest stall and the slowest of those requests, beside the
 * issue's target (100 ms) and what the bug did (7–15 s). Figures are printed, never asserted (the
 * test test/server/token-count-stall.test.ts holds that every request is answered). BENCH_ROUNDS
 * (3) repeats each input; the worst round is printed.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent } from '../src/app/agents/agents.ts';
import { addModelProvider } from '../src/app/backends/model-providers.ts';
import { assembleMesh } from '../src/app/compose.ts';
import { ensureFirstOperatorToken } from '../src/app/operators/operator-auth.ts';
import { InstanceKey } from '../src/secrets/instance-key.ts';
import { startServer } from '../src/server/server.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/pglite.ts';
import { startFakeMcpServer, textTool } from '../test/support/mcp-server.ts';
import { whileProbing } from '../test/support/probe.ts';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

const home = mkdtempSync(join(tmpdir(), 'mesh-bench-stall-'));
const db = await openPglite({ dataDir: join(home, 'db') });
await migrate(db);
const mesh = assembleMesh(db, new InstanceKey(randomBytes(32)));
const first = await ensureFirstOperatorToken(db);
const server = await startServer(mesh, {
  host: '127.0.0.1',
  port: 0,
  log: () => undefined,
  version: 'bench',
});
const mcp = await startFakeMcpServer({ tools: [textTool('lookup', '!?'.repeat(50_000))] });
const base = server.url.replace(/\/$/, '');
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${first?.token ?? ''}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await res.arrayBuffer();
  return res.status;
};

async function worst(label: string, work: () => Promise<void>): Promise<void> {
  let stall = 0;
  let latency = 0;
  let probes = 0;
  let errors = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const m = await whileProbing(() => api('GET', '/api/agents'), work);
    stall = Math.max(stall, m.stallMs);
    latency = Math.max(latency, m.latencyMs);
    probes += m.probes;
    errors += m.failed;
  }
  console.log(
    `${label}: loop stall ${stall.toFixed(0)} ms, slowest concurrent GET /api/agents ${latency.toFixed(0)} ms ` +
      `(target 100 ms; the bug held it 7,000-15,000 ms); ${probes} probes, errors: ${errors}`,
  );
}

try {
  await addModelProvider(mesh, {
    name: 'script',
    kind: 'scripted',
    script: { fallback: { content: 'Read it.' } },
  });
  await createAgent(mesh, { name: 'reader', provider: 'script', model: 'scripted' });
  const send = async (body: string) => {
    const status = await api('POST', '/api/agents/reader/messages?wait=60', { body });
    if (status !== 200) throw new Error(`the message was answered ${status}`);
  };
  // Warm the server up (tokenizer tables, first queries) so the probes measure the input.
  await send('hello');
  await worst('99 KB message without spaces', () => send('a'.repeat(99_000)));
  await api('POST', '/api/mcp/providers', {
    slug: 'long',
    url: mcp.url,
    allow_loopback_http: true,
  });
  await api('PUT', '/api/agents/reader/mcp/long/token', { value: 'any' });
  await api('POST', '/api/agents/reader/mcp/long/catalog/review');
  await worst('100 KB remote tool description', () => send('look it up'));
} finally {
  await mcp.close();
  await server.close();
  await mesh.close();
  rmSync(home, { recursive: true, force: true });
}
