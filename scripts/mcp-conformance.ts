/**
 * npm run test:mcp-conformance
 * Runs the official MCP conformance suite (test/conformance: its own Node 22 and package) against
 * Mesh's client (scripts/mcp-conformance-client.ts, on this Node): the `initialize`, `tools_call`
 * and `sse-retry` scenarios and the whole `auth` suite, with test/conformance/baseline.yml as the
 * expected failures. Prints passed/total per suite; exits non-zero on an unexpected failure or a
 * stale baseline entry. Results (checks.json, client output, the suite's log) go under
 * test-output/conformance/.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isScalar, isSeq, parseDocument } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const conformance = join(root, 'test/conformance');
const node22 = join(conformance, 'node_modules/.bin/node');
const cli = join(conformance, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const baselineFile = join(conformance, 'baseline.yml');
const output = join(root, 'test-output/conformance');
/** The client runs on this Node (the system one), not the suite's. The suite splits on spaces. */
const client = `${process.execPath} --import tsx ${join(root, 'scripts/mcp-conformance-client.ts')}`;

const SUITES: { name: string; runs: string[][] }[] = [
  {
    name: 'core',
    runs: [
      ['--scenario', 'initialize'],
      ['--scenario', 'tools_call'],
      ['--scenario', 'sse-retry'],
    ],
  },
  { name: 'auth', runs: [['--suite', 'auth']] },
];

interface Check {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly description?: string;
  readonly errorMessage?: string;
}

interface Outcome {
  readonly scenario: string;
  readonly checks: readonly Check[];
  /** As the suite judges a scenario against a baseline: no failure and no warning. */
  readonly passed: boolean;
}

/** The baseline's client scenarios, each with the comment giving its reason. */
function readBaseline(): Map<string, string> {
  const entries = new Map<string, string>();
  const client = parseDocument(readFileSync(baselineFile, 'utf8')).get('client');
  if (!isSeq(client)) return entries;
  client.items.forEach((item, index) => {
    if (!isScalar(item)) return;
    // The comment above the first item belongs to the list itself.
    const above = index === 0 ? client.commentBefore : item.commentBefore;
    const reason = (item.comment ?? above ?? '').replace(/\s*\n\s*/g, ' ').trim();
    entries.set(String(item.value), reason || '(no reason given)');
  });
  return entries;
}

function runSuite(args: readonly string[], outDir: string, log: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      node22,
      [
        cli,
        'client',
        '--command',
        client,
        ...args,
        '--expected-failures',
        baselineFile,
        '--output-dir',
        outDir,
      ],
      // tsx resolves from the working directory: Mesh's root.
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout.on('data', (chunk: Buffer) => log.push(chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => log.push(chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** Every scenario's checks under `dir` (the suite writes `<scenario>-<timestamp>/checks.json`). */
function outcomes(dir: string): Outcome[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('checks.json'))
    .map((file) => {
      const scenario = dirname(file)
        .split(sep)
        .join('/')
        .replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
      const checks = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Check[];
      const passed = !checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      return { scenario, checks, passed };
    })
    .sort((a, b) => a.scenario.localeCompare(b.scenario));
}

if (!existsSync(node22) || !existsSync(cli)) {
  console.error('the conformance suite is not installed: npm ci --prefix test/conformance');
  process.exit(2);
}
const baseline = readBaseline();
rmSync(output, { recursive: true, force: true });

/** Prints each scenario's verdict against the baseline; returns how many are problems. */
function judge(results: readonly Outcome[]): number {
  let problems = 0;
  for (const result of results) {
    const ok = result.checks.filter((c) => c.status === 'SUCCESS').length;
    const judged = result.checks.filter((c) => c.status !== 'INFO').length;
    const reason = baseline.get(result.scenario);
    const verdict = result.passed
      ? reason === undefined
        ? 'passed'
        : 'STALE baseline entry: passes now'
      : reason === undefined
        ? 'UNEXPECTED failure'
        : `expected failure: ${reason}`;
    console.log(
      `${result.passed ? '✓' : '✗'} ${result.scenario} (${ok}/${judged} checks): ${verdict}`,
    );
    for (const c of result.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING'))
      console.log(`    ${c.status} ${c.name}: ${c.errorMessage ?? c.description ?? ''}`);
    if (result.passed === (reason !== undefined)) problems++;
  }
  return problems;
}

let problems = 0;
const summary: string[] = [];
const seen = new Set<string>();
for (const suite of SUITES) {
  const outDir = join(output, suite.name);
  mkdirSync(outDir, { recursive: true });
  const log: string[] = [];
  let suiteFailed = false;
  for (const args of suite.runs) if ((await runSuite(args, outDir, log)) !== 0) suiteFailed = true;
  writeFileSync(join(output, `${suite.name}.log`), log.join(''));

  const results = outcomes(outDir);
  for (const r of results) seen.add(r.scenario);
  let suiteProblems = judge(results);
  for (const [flag, name] of suite.runs)
    if (flag === '--scenario' && name !== undefined && !seen.has(name)) {
      console.log(`✗ ${name}: no result (see ${suite.name}.log)`);
      suiteProblems++;
    }
  // The suite's own verdict against the baseline must agree with this one.
  if (suiteFailed && suiteProblems === 0) {
    console.log(`✗ the suite reported a failure in ${suite.name}; see ${suite.name}.log`);
    suiteProblems++;
  }
  problems += suiteProblems;

  const checks = results.flatMap((r) => r.checks).filter((c) => c.status !== 'INFO');
  const passedChecks = checks.filter((c) => c.status === 'SUCCESS').length;
  const passed = results.filter((r) => r.passed).length;
  summary.push(
    `${suite.name}: ${passed}/${results.length} scenarios passed (${passedChecks}/${checks.length} checks)`,
  );
}
for (const name of baseline.keys())
  if (!seen.has(name)) {
    console.log(`✗ baseline entry ${name} names a scenario this script does not run`);
    problems++;
  }

console.log(`\nMCP conformance (@modelcontextprotocol/conformance, client):`);
for (const line of summary) console.log(`  ${line}`);
console.log(`  results: ${relative(root, output)}/`);
console.log(
  problems === 0
    ? '  baseline check passed'
    : `  FAILED: ${problems} unexpected failure(s) or stale baseline entr(ies)`,
);
process.exitCode = problems === 0 ? 0 : 1;
