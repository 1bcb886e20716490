/**
 * bench:tenants — one `mesh serve` on PostgreSQL holding many co-tenanted agents at once (issue 18:
 * ten times the spec's fifty). Each agent has the memory verbs and one remote MCP server on
 * loopback (the official SDK's server), and a Chat Completions fake on loopback answers every
 * model request after a fixed delay: first with a call of the agent's remote tool, then, once the
 * tool's result is sent back, with the reply. Every agent sends its messages one after another,
 * all agents at once, through the HTTP API.
 *
 * Printed: messages/s; the control plane's own overhead per tool round p50/p99 — the time from
 * the fake's first answer (the tool call) leaving to the next request of that turn arriving
 * (the response stored, the call recorded, the MCP call made, its observation stored, the ledger
 * and context built, the next request sent), so the fake's delay is not in it; errors (non-200
 * answers and turns that did not succeed); the server's peak RSS (VmHWM).
 *
 * BENCH_AGENTS (500), BENCH_MESSAGES per agent (3), BENCH_DELAY_MS (200), BENCH_PROFILE_DIR (the
 * server's CPU profile, see bench/profile-summary.ts; BENCH_PROFILE_US its sampling interval), BENCH_REPLICAS (1: with 2, the messages are
 * sent again once a second `mesh serve` on the same database has joined, and the two rates are
 * compared). Needs DATABASE_URL
 * pointing at a PostgreSQL server: the bench creates its own database there and drops it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeChatCompletions, type FakeReply } from '../test/support/fake-chat-completions.ts';
import { startFakeMcpServer, textTool } from '../test/support/mcp-server.ts';
import { freshPostgresUrl } from '../test/support/postgres.ts';
import { percentile } from './stats.ts';

const AGENTS = Number(process.env['BENCH_AGENTS'] ?? '500');
const MESSAGES = Number(process.env['BENCH_MESSAGES'] ?? '3');
const DELAY_MS = Number(process.env['BENCH_DELAY_MS'] ?? '200');
const SLUG = 'lookup';
const PROFILE_DIR = process.env['BENCH_PROFILE_DIR'];
/** The profile's sampling interval in µs (BENCH_PROFILE_US): finer to follow one round. */
const PROFILE_US = Number(process.env['BENCH_PROFILE_US'] ?? '1000');
const REPLICAS = Number(process.env['BENCH_REPLICAS'] ?? '1');

if (!process.env['DATABASE_URL']) {
  console.log('bench:tenants needs DATABASE_URL pointing at a PostgreSQL server');
  process.exit(1);
}

interface ChatRequest {
  readonly messages: readonly { readonly role: string; readonly tool_call_id?: string }[];
  readonly tools?: readonly { function: { name: string } }[];
}

/**
 * The model: the shared Chat Completions fake, which streams as the real API does when asked
 * (Mesh asks, since replies stream to the chat). A tool call first, the reply once the tool's
 * result is back, each after DELAY_MS.
 */
async function startModel(): Promise<{ url: string; overheads: number[]; close(): Promise<void> }> {
  const sentAt = new Map<string, number>();
  const overheads: number[] = [];
  let calls = 0;
  const usage = { promptTokens: 100, completionTokens: 10, totalTokens: 110 };
  const fake = await startFakeChatCompletions({
    respond: (json): FakeReply => {
      const arrived = performance.now();
      const body = json as ChatRequest;
      // The turn's last message that is not Mesh's own system context (the ledger follows the
      // tool results): a tool result means the round's call came back.
      const last = body.messages.filter((m) => m.role !== 'system').at(-1);
      const pending = last?.role === 'tool' ? last.tool_call_id : undefined;
      if (pending !== undefined) {
        const sent = sentAt.get(pending);
        if (sent !== undefined) overheads.push(arrived - sent);
        sentAt.delete(pending);
      }
      const tool = body.tools?.map((t) => t.function.name).find((n) => n.endsWith('__find'));
      const id = `call_${++calls}`;
      const callsTool = pending === undefined && tool !== undefined;
      const delay = new Promise<void>((resolve) => setTimeout(resolve, DELAY_MS));
      return {
        kind: 'after',
        // The answer leaves right after the gate: that is when the round's overhead starts.
        gate: callsTool ? delay.then(() => void sentAt.set(id, performance.now())) : delay,
        reply: callsTool
          ? {
              kind: 'completion',
              content: null,
              toolCalls: [{ id, name: tool, arguments: JSON.stringify({ q: 'deploy' }) }],
              usage,
            }
          : { kind: 'completion', content: 'Found it.', usage },
      };
    },
  });
  return { url: fake.baseUrl, overheads, close: () => fake.close() };
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 'NaN');
  return kb / 1024;
}

const model = await startModel();
const mcp = await startFakeMcpServer({ tools: [textTool('find', 'Find a record by a word')] });
const fresh = await freshPostgresUrl();
const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-tenants-'));
writeFileSync(join(dir, 'instance.key'), randomBytes(32), { mode: 0o600 });
interface Replica {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string | undefined;
}

/** Starts one `mesh serve` on the bench's database (each replica with a home of its own). */
async function startReplica(n: number): Promise<Replica> {
  const child = spawn(
    process.execPath,
    [
      // BENCH_PROFILE_DIR: the server writes a V8 CPU profile there when it stops (read it with
      // `npm run bench:profile -- DIR`).
      ...(PROFILE_DIR
        ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-interval=${PROFILE_US}`]
        : []),
      join(process.cwd(), 'bin', 'mesh.js'),
      'serve',
      '--port',
      '0',
    ],
    {
      env: {
        ...process.env,
        MESH_HOME: join(dir, `home-${n}`),
        DATABASE_URL: fresh.url,
        MESH_INSTANCE_KEY_FILE: join(dir, 'instance.key'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  const seen = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = lines.find((l) => pattern.test(l));
        if (line !== undefined) resolve(line);
      };
      const onData = (chunk: Buffer) => {
        lines.push(...chunk.toString('utf8').split('\n'));
        check();
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) =>
        reject(new Error(`mesh serve exited (${code}):\n${lines.join('\n')}`)),
      );
      check();
    });
  const url = (await seen(/^URL: /)).slice('URL: '.length).trim();
  // The first replica on a database mints the first token and prints it; later ones do not.
  const token =
    n === 0 ? (await seen(/^Operator token: /)).slice('Operator token: '.length).trim() : undefined;
  return { child, url, token };
}

const replicas: Replica[] = [await startReplica(0)];

try {
  const token = replicas[0]?.token ?? '';
  const api = async (method: string, path: string, body?: unknown, base = replicas[0]?.url) => {
    const response = await fetch(`${base}${path.slice(1)}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      json: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
    };
  };
  const must = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, body);
    if (r.status >= 300)
      throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
    return r;
  };

  await must('POST', '/api/providers', {
    name: 'loop',
    kind: 'openai_compatible',
    base_url: model.url,
    api_key: 'sk-bench-tenants-0123456789',
  });
  await must('POST', '/api/mcp/providers', { slug: SLUG, url: mcp.url, allow_loopback_http: true });
  const names = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
  const setupStarted = performance.now();
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(
      names.slice(i, i + 25).map(async (name) => {
        await must('POST', '/api/agents', { name, provider: 'loop', model: 'fake-model' });
        await must('PUT', `/api/agents/${name}/mcp/${SLUG}/token`, { value: `token-${name}` });
        await must('POST', `/api/agents/${name}/mcp/${SLUG}/catalog/review`);
      }),
    );
  }
  console.log(
    `${AGENTS} agents, each with the memory verbs and the ${SLUG} MCP server, set up in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`,
  );

  /** Every agent sends its messages, agent i to replica i mod the replicas running. */
  async function phase(label: string, round: number): Promise<number> {
    let errors = 0;
    let sent = 0;
    const failures = new Map<string, number>();
    const firstRound = model.overheads.length;
    const started = performance.now();
    await Promise.all(
      names.map(async (name, i) => {
        const base = replicas[i % replicas.length]?.url;
        for (let m = 0; m < MESSAGES; m++) {
          const r = await api(
            'POST',
            `/api/agents/${name}/messages?wait=120`,
            { body: `find deploy ${round}.${m}` },
            base,
          );
          sent++;
          if (r.status !== 200 || r.json['status'] !== 'succeeded') {
            errors++;
            const code = (r.json['error'] as { code?: string } | undefined)?.code;
            const what = `${r.status} ${code ?? String(r.json['status'])}`;
            failures.set(what, (failures.get(what) ?? 0) + 1);
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const rounds = model.overheads.slice(firstRound);
    const rate = sent / seconds;
    console.log(
      `${label}: ${sent} messages from ${AGENTS} concurrent agents in ${seconds.toFixed(1)} s: ${rate.toFixed(1)} messages/s (model delay ${DELAY_MS} ms a request, two requests a message)`,
    );
    console.log(
      `control-plane overhead per tool round: p50 ${percentile(rounds, 50).toFixed(1)} ms  p99 ${percentile(rounds, 99).toFixed(1)} ms  (${rounds.length} rounds; target p99 <= 100 ms)`,
    );
    console.log(`errors: ${errors} (target 0)`);
    for (const [what, n] of [...failures].slice(0, 5)) console.log(`  ${n}× ${what}`);
    for (const [n, r] of replicas.entries())
      console.log(
        `replica ${n} peak RSS: ${peakRssMb(r.child.pid ?? 0).toFixed(0)} MB (target <= 512 MB)`,
      );
    return rate;
  }

  const one = await phase('1 replica', 0);
  if (REPLICAS > 1) {
    // The same agents and database, with more processes serving and driving turns.
    for (let n = 1; n < REPLICAS; n++) replicas.push(await startReplica(n));
    const more = await phase(`${REPLICAS} replicas`, 1);
    console.log(
      `throughput with ${REPLICAS} replicas: ${(more / one).toFixed(2)}x one replica's (same run)`,
    );
  }
  console.log(
    `MCP calls received by the servers: ${mcp.received.filter((r) => r.rpc === 'tools/call').length}`,
  );
} finally {
  await Promise.all(
    replicas.map(async (r) => {
      r.child.kill('SIGTERM');
      await new Promise((resolve) => r.child.once('exit', resolve));
    }),
  );
  await model.close();
  await mcp.close();
  await fresh.drop();
  rmSync(dir, { recursive: true, force: true });
}
