/**
 * bench:executor — the executor's overhead per call (decode + validate + dispatch) against calling
 * the same no-op handler directly, measured in one run with a real schema from the MCP fixtures.
 */
import { loadCatalog } from '../test/fixtures/mcp-catalog.ts';
import type { JsonObject } from '../src/model/json.ts';
import { services, type ToolContext, type ToolRuntime } from '../src/tool/context.ts';
import type { ToolHandler } from '../src/tool/definition.ts';
import { execute } from '../src/tool/executor.ts';
import { createRegistry } from '../src/tool/registry.ts';
import { median, nsPerCall } from './stats.ts';

const fixture = loadCatalog().find((t) => t.server === 'github' && t.name === 'update_issue');
if (!fixture) throw new Error('fixture github/update_issue not found');

const handler: ToolHandler = async () => ({ text: 'ok' });
const registry = createRegistry([
  {
    tool: {
      name: 'update_issue',
      description: fixture.description,
      parameters: fixture.inputSchema,
    },
    class: 'effect',
    replay: 'effectful',
    needs: [],
    origin: { source: 'remote', packageId: 'github', version: '1.0.0', digest: '0'.repeat(64) },
    execute: handler,
  },
]);
const runtime: ToolRuntime = {
  agentId: 'agent',
  runId: 'run',
  provenance: { kind: 'operator', operator: 'bench' },
  signal: new AbortController().signal,
  services: services([]),
  configFor: () => ({}),
};
const args = {
  owner: 'mesh-dev',
  repo: 'mesh',
  issue_number: 216,
  title: 'Cross the commit boundary before effects',
  body: 'Record the commit stamp before any effectful non-query call runs.',
  labels: ['runtime', 'p1'],
  assignees: ['ada'],
  state: 'open',
};
const raw = JSON.stringify(args);
const call = { id: 'call-1', name: 'update_issue', arguments: raw };
const ctx: ToolContext = {
  agentId: 'agent',
  runId: 'run',
  callId: 'call-1',
  toolName: 'update_issue',
  provenance: runtime.provenance,
  signal: runtime.signal,
  services: runtime.services,
  config: {},
  secret: () => Promise.reject(new Error('no secrets in the benchmark')),
  fetch: () => Promise.reject(new Error('no HTTP in the benchmark')),
};
const parsed: JsonObject = args;

const check = await execute(registry, call, runtime);
if (check.kind !== 'observation')
  throw new Error(`the bench call was refused: ${check.observation.text}`);

const options = { batches: 200, batch: 2000, warmup: 50_000 };
const viaExecutor = median(await nsPerCall(() => execute(registry, call, runtime), options));
const direct = median(await nsPerCall(() => handler(ctx, parsed), options));
const overhead = viaExecutor - direct;

console.log(
  `schema: github/update_issue (${Object.keys(args).length} fields, ${raw.length} bytes of arguments)`,
);
console.log(
  `executor (decode + validate + dispatch): median ${viaExecutor.toFixed(0)} ns/call (target <= 1500 ns, no telemetry configured)`,
);
console.log(`direct handler call:                     median ${direct.toFixed(0)} ns/call`);
console.log(
  `overhead: ${overhead.toFixed(0)} ns/call (target <= 3000 ns); ratio executor/direct: ${(viaExecutor / direct).toFixed(1)}x`,
);
