/**
 * npm run test:crash -- --runs N [--kills K] [--database postgres|pglite] [--seed S]
 * A longer crash campaign than the test suite's. Uses DATABASE_URL's server unless told otherwise.
 */
import { parseArgs } from 'node:util';
import { runCampaign, summaryLine } from '../test/crash/campaign.ts';
import { effectSummaryLine, runEffectCampaign } from '../test/crash/effect-campaign.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    kills: { type: 'string' },
    database: { type: 'string' },
    seed: { type: 'string' },
    // The effect-tool campaign (real mesh.linear, mesh.slack and mesh.github against their fakes).
    'effect-kills': { type: 'string', default: '12' },
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
const effectKills = Number(values['effect-kills']);
if (!Number.isSafeInteger(effectKills) || effectKills < 0)
  throw new Error('--effect-kills must be a whole number');
const effects = await runEffectCampaign({
  database,
  runs: Math.max(2, Math.ceil(effectKills / 2)),
  kills: effectKills,
  ...(values.seed ? { seed: Number(values.seed) } : {}),
  ...(values.verbose ? { log: (line: string) => console.log(line) } : {}),
});
if (effects.problems.length > 0) console.log(effects.problems.join('\n'));
console.log(effectSummaryLine(effects));
const effectFailures =
  effects.duplicateEffects +
  effects.linearUnsettled +
  effects.githubUnsettled +
  effects.slackMisreported +
  effects.unfinishedRuns +
  effects.problems.length;
process.exitCode =
  effectFailures > 0
    ? 1
    : result.duplicateEffects +
          result.lostSteps +
          result.unreportedInterruptions +
          result.unfinishedRuns +
          result.problems.length ===
        0
      ? 0
      : 1;
