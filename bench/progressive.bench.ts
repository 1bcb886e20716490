/**
 * bench:progressive — an agent connected to the 97 tools of the fixture catalog, each of its 11
 * servers a loopback MCP server on the official server SDK, as an operator would connect them.
 *
 * Prints, from one real turn (a scripted model that searches, then answers), the tokens of the
 * first model request's tools carrying every schema and on the index, and their ratio; recall@5
 * of `mesh tools search` (its use case, `tools.search`) on the intent set it was tuned on and on a
 * held-out set it never was; and the p50 of the search itself at 97 tools and at 5,000
 * (synthetic copies of the catalog under other slugs), beside what the whole use case costs.
 * Figures are printed, never asserted. BENCH_PASSES (20) searches of each intent and BENCH_LARGE
 * (5,000) tools in the large index size it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/server';
import { createAgent } from '../src/app/agents/agents.ts';
import { connectAgent } from '../src/app/mcp/connections.ts';
import { addToolProvider } from '../src/app/mcp/providers.ts';
import { assembleMesh } from '../src/app/compose.ts';
import { addModelProvider } from '../src/app/backends/model-providers.ts';
import { turnPolicy } from '../src/app/packages/policy.ts';
import { chat } from '../src/app/conversations/turns.ts';
import { searchAgentTools } from '../src/app/agents/tool-search.ts';
import { InstanceKey } from '../src/secrets/instance-key.ts';
import { rememberMemory } from '../src/store/memories.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/pglite.ts';
import type { Definition } from '../src/tool/definition.ts';
import { buildToolIndex } from '../src/turn/tool-index.ts';
import { TokenCounter } from '../src/turn/token-count.ts';
import { planToolLoading, searchIndexOf, searchableDefinitions } from '../src/turn/tool-loading.ts';
import { startFakeMcpServer, type FakeMcpServer } from '../test/support/mcp-server.ts';
import { fixtureSlug } from '../test/support/remote-catalog.ts';
import { HOLDOUT } from './progressive-holdout.ts';
import { INTENTS, type Intent } from './progressive-intents.ts';
import { percentile } from './stats.ts';

const PASSES = Number(process.env['BENCH_PASSES'] ?? '20');
const LARGE = Number(process.env['BENCH_LARGE'] ?? '5000');

const raw = JSON.parse(
  readFileSync(new URL('../test/fixtures/mcp-catalog.json', import.meta.url), 'utf8'),
) as Record<string, Tool[]>;
const home = mkdtempSync(join(tmpdir(), 'mesh-bench-progressive-'));
const servers: FakeMcpServer[] = [];
const db = await openPglite({ dataDir: join(home, 'pgdata') });

function p50(times: number[]): string {
  return `${percentile(times, 50).toFixed(3)} ms (p95 ${percentile(times, 95).toFixed(3)} ms)`;
}

function timeSearches(search: (ask: string) => unknown): number[] {
  const times: number[] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    for (const { ask } of [...INTENTS, ...HOLDOUT]) {
      const t0 = performance.now();
      search(ask);
      times.push(performance.now() - t0);
    }
  }
  return times;
}

async function recall(name: string, intents: readonly Intent[]): Promise<void> {
  let found = 0;
  let expected = 0;
  const misses: string[] = [];
  for (const intent of intents) {
    const ranked = await searchAgentTools(mesh, 'bench', intent.ask, 5);
    const names = ranked.map((r) => r.name);
    const hits = intent.expect.filter((e) => names.includes(e));
    found += hits.length;
    expected += intent.expect.length;
    if (hits.length < intent.expect.length)
      misses.push(
        `    "${intent.ask}": wanted ${intent.expect.filter((e) => !names.includes(e)).join(', ')}; got ${names.join(', ')}`,
      );
  }
  console.log(
    `recall@5 of mesh tools search, ${name} (${intents.length} intents, ${expected} expected operations): ${(found / expected).toFixed(3)}`,
  );
  for (const m of misses) console.log(m);
}

/** The catalog under `copies` sets of other slugs: `LARGE` definitions for the 5,000-tool index. */
function synthetic(definitions: readonly Definition[], size: number): Definition[] {
  const out: Definition[] = [];
  for (let copy = 0; out.length < size; copy++) {
    for (const d of definitions) {
      if (out.length === size) break;
      const slug = d.origin.packageId.replace(/^mcp\./, '');
      const renamed = `${slug}${copy}`;
      out.push({
        ...d,
        tool: { ...d.tool, name: d.tool.name.replace(`${slug}__`, `${renamed}__`) },
        origin: { ...d.origin, packageId: `mcp.${renamed}` },
      });
    }
  }
  return out;
}

await migrate(db);
const mesh = assembleMesh(db, new InstanceKey(randomBytes(32)));
try {
  await addModelProvider(mesh, {
    name: 'script',
    kind: 'scripted',
    script: {
      responses: [
        { toolCalls: [{ name: 'tool_search', arguments: { query: 'open a pull request' } }] },
        { content: 'Found it.' },
        { content: 'Noted.' },
      ],
    },
  });
  const agent = await createAgent(mesh, { name: 'bench', provider: 'script', model: 'scripted' });
  for (const [server, tools] of Object.entries(raw)) {
    const fake = await startFakeMcpServer({ tools });
    servers.push(fake);
    const slug = fixtureSlug(server);
    await addToolProvider(mesh, { slug, url: fake.url, allowLoopbackHttp: true });
    await connectAgent(mesh, agent, slug, 'bench-token');
  }
  const total = Object.values(raw).reduce((n, tools) => n + tools.length, 0);
  const { registry, withheld } = await turnPolicy(mesh, agent.id, 'direct');
  const remote = registry.definitions().filter((d) => d.origin.source === 'remote');
  console.log(
    `${servers.length} loopback MCP servers, ${total} tools listed; ${remote.length} remote and ${registry.size - remote.length} built-in offered to the agent ` +
      `(withheld: ${withheld.map((w) => `${w.name}: ${w.reason}`).join('; ')})`,
  );

  const plan = await planToolLoading({
    registry,
    budget: { contextTokens: 128_000, reservedOutputTokens: 4_096 },
    checkpoint: {},
    save: () => Promise.resolve(),
  });
  const counter = new TokenCounter();
  const each = await Promise.all(
    plan.offered().map(async (t) => `${t.name} ${await counter.count(JSON.stringify(t))}`),
  );
  console.log(`the index's tools one by one (tokens): ${each.join(', ')}`);

  const turn = await chat(mesh, { agentId: agent.id, actor: 'bench', body: 'open a PR' });
  const requests = turn.steps.flatMap((s) => (s.kind === 'model_request' ? [s.data] : []));
  const first = requests[0] ?? {};
  const loading = first['loading'] as { index: boolean; allTokens: number; indexTokens: number };
  const carried = (first['estimate'] as { tools: number }).tools;
  const offered = (first['offered'] as string[]).join(', ');
  console.log(`turn ${turn.status}; first request offered: ${offered}`);
  console.log(`first request's tools, carrying every schema: ${loading.allTokens} tokens`);
  console.log(`first request's tools, on the index:          ${carried} tokens`);
  console.log(
    `ratio: ${((carried / loading.allTokens) * 100).toFixed(2)}% (${(100 - (carried / loading.allTokens) * 100).toFixed(1)}% less)`,
  );
  console.log(
    `the cost model's index side (own verbs, tool_search, one search's expected load): ${loading.indexTokens} tokens; index used: ${loading.index}`,
  );
  // The same agent once it has a memory to act on: recall, amend and forget are offered too.
  await rememberMemory(
    db,
    randomUUID(),
    {
      agentId: agent.id,
      provenance: { kind: 'operator', actor: 'bench' },
      sourceMessageId: null,
      runId: null,
      callId: null,
    },
    'the deploy window is Friday',
  );
  const remembering = await chat(mesh, { agentId: agent.id, actor: 'bench', body: 'hello' });
  const withMemory = remembering.steps.find((s) => s.kind === 'model_request')?.data ?? {};
  const memoryCarried = (withMemory['estimate'] as { tools: number }).tools;
  const memoryAll = (withMemory['loading'] as { allTokens: number }).allTokens;
  console.log(
    `with a memory to act on (recall, amend, forget offered): ${memoryCarried} of ${memoryAll} tokens, ${((memoryCarried / memoryAll) * 100).toFixed(2)}%`,
  );
  const second = requests[1] ?? {};
  console.log(
    `second request's tools, after the search: ${(second['estimate'] as { tools: number }).tools} tokens (${(second['offered'] as string[]).length} tools)`,
  );

  // An expected name the registry does not hold would count as a miss the ranking never had a
  // chance at (a set written with the servers' keys, not their slugs): refuse it instead.
  const names = new Set(registry.definitions().map((d) => d.tool.name));
  const unknown = [...INTENTS, ...HOLDOUT].flatMap((i) => i.expect).filter((e) => !names.has(e));
  if (unknown.length > 0)
    throw new Error(`expected tools not in the registry: ${unknown.join(', ')}`);
  await recall('the tuning set', INTENTS);
  await recall('the held-out set', HOLDOUT);

  const searchable = searchableDefinitions(registry);
  const small = searchIndexOf(registry);
  console.log(
    `search p50 at ${small.size} tools: ${p50(timeSearches((ask) => small.search(ask, 5)))}`,
  );
  const many = synthetic(searchable, LARGE);
  const t0 = performance.now();
  const large = buildToolIndex(many);
  const built = performance.now() - t0;
  console.log(
    `search p50 at ${large.size} tools: ${p50(timeSearches((ask) => large.search(ask, 5)))} (index built in ${built.toFixed(0)} ms)`,
  );
  const whole: number[] = [];
  for (const { ask } of INTENTS.slice(0, 40)) {
    const t = performance.now();
    await searchAgentTools(mesh, 'bench', ask, 5);
    whole.push(performance.now() - t);
  }
  console.log(
    `the whole tools.search operation at 97 tools (policy read, index build, search): p50 ${p50(whole)}`,
  );
} finally {
  await mesh.close();
  await Promise.all(servers.map((s) => s.close()));
  rmSync(home, { recursive: true, force: true });
}
