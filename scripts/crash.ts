/**
 * npm run test:crash -- --runs N [--kills K] [--database postgres|pglite] [--seed S]
 * A longer crash campaign than the test suite's. Uses DATABASE_URL's server unless told otherwise.
 */
import { parseArgs } from 'node:util';
import { runCampaign, summaryLine } from '../test/crash/campaign.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    kills: { type: 'string' },
    database: { type: 'string' },
    seed: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const database = (values.database ?? (process.env['DATABASE_URL'] ? 'postgres' : 'pglite')) as
  'postgres' | 'pglite';
if (!Number.isSafeInteger(runs) || runs <= 0) throw new Error('--runs must be a positive integer');
const result = await runCampaign({
  database,
  runs,
  minKills: values.kills ? Number(values.kills) : runs,
  ...(values.seed ? { seed: Number(values.seed) } : {}),
  ...(values.verbose ? { log: (line: string) => console.log(line) } : {}),
});
if (result.problems.length > 0) console.log(result.problems.join('\n'));
console.log(
  `database=${database} unreported_interruptions=${result.unreportedInterruptions} unfinished_runs=${result.unfinishedRuns}`,
);
console.log(summaryLine(result));
process.exitCode =
  result.duplicateEffects +
    result.lostSteps +
    result.unreportedInterruptions +
    result.unfinishedRuns +
    result.problems.length ===
  0
    ? 0
    : 1;
