/**
 * bench:profile — where a V8 CPU profile's time went, by phase. Reads the newest `.cpuprofile` in
 * the directory given (e.g. one `BENCH_PROFILE_DIR=… npm run bench:tenants` left) and attributes
 * each sample's self time to the first phase whose rule matches the sampled function's script:
 * the database driver, JSON, token counting, schema validation, MCP, HTTP, the ledger, the
 * turn engine… and idle and GC as V8 reports them. Prints each phase's share of the busy time.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Phases, first match wins: what a sampled function's script (or V8's own marker) belongs to. */
const PHASES: readonly {
  readonly phase: string;
  readonly test: (url: string, fn: string) => boolean;
}[] = [
  { phase: 'idle', test: (_u, fn) => fn === '(idle)' },
  { phase: 'garbage collection', test: (_u, fn) => fn === '(garbage collector)' },
  { phase: 'V8 and native (program)', test: (_u, fn) => fn === '(program)' },
  { phase: 'JSON (parse, stringify)', test: (_u, fn) => fn === 'parse' || fn === 'stringify' },
  {
    phase: 'database driver (pg)',
    test: (u) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//.test(u),
  },
  {
    phase: 'token counting',
    test: (u) => /gpt-tokenizer|token-count|context-budget|tool-loading/.test(u),
  },
  {
    phase: 'schema validation (ajv)',
    test: (u) => /node_modules\/ajv|decode-arguments|argument-shape|schema-compiler/.test(u),
  },
  {
    phase: 'MCP client (SDK, sessions)',
    test: (u) => /@modelcontextprotocol|src\/mcp\/|mcp-/.test(u),
  },
  {
    phase: 'model client (openai SDK)',
    test: (u) => /node_modules\/openai|src\/providers\//.test(u),
  },
  {
    phase: 'HTTP server (hono, node:http)',
    test: (u) => /hono|node:_http|node:http|src\/server\//.test(u),
  },
  { phase: 'redaction', test: (u) => /redact/.test(u) },
  { phase: 'ledger and run store', test: (u) => /src\/run\/|src\/store\//.test(u) },
  { phase: 'turn engine', test: (u) => /src\/turn\//.test(u) },
  { phase: 'tool executor and handlers', test: (u) => /src\/tool\/|\/tools\//.test(u) },
  { phase: 'streams, sockets, timers (node:)', test: (u) => u.startsWith('node:') },
  { phase: 'other Mesh code', test: (u) => /\/src\//.test(u) },
  { phase: 'other packages', test: (u) => u.includes('node_modules') },
  { phase: 'other', test: () => true },
];

const dir = process.argv[2];
if (!dir) {
  console.log('usage: npm run bench:profile -- DIR (a directory holding .cpuprofile files)');
  process.exit(1);
}
const newest = readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .map((f) => join(dir, f))
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
if (!newest) throw new Error(`no .cpuprofile in ${dir}`);
const profile = JSON.parse(readFileSync(newest, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const phaseOf = new Map<number, string>();
for (const node of profile.nodes) {
  const { url, functionName } = node.callFrame;
  phaseOf.set(node.id, PHASES.find((p) => p.test(url, functionName))?.phase ?? 'other');
}
const time = new Map<string, number>();
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i] ?? -1;
  const us = profile.timeDeltas[i] ?? 0;
  const phase = byId.has(id) ? (phaseOf.get(id) ?? 'other') : 'other';
  time.set(phase, (time.get(phase) ?? 0) + us);
  total += us;
}
const idle = time.get('idle') ?? 0;
const busy = total - idle;
console.log(`${newest}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`);
for (const [phase, us] of [...time.entries()].sort((a, b) => b[1] - a[1])) {
  if (phase === 'idle') continue;
  console.log(
    `${phase.padEnd(34)} ${(us / 1e6).toFixed(2).padStart(7)} s  ${((us / busy) * 100).toFixed(1).padStart(5)}% of busy`,
  );
}
console.log(`${'idle'.padEnd(34)} ${(idle / 1e6).toFixed(2).padStart(7)} s`);
