import { describe, expect, it } from 'vitest';
import { effectSummaryLine, runEffectCampaign } from './effect-campaign.ts';

/**
 * A smoke run of the effect-tool crash campaign (`npm run test:crash` runs the long one): two
 * real workers killed with SIGKILL on an effect's path, the run resumed, the fakes compared. On
 * PostgreSQL only: on the embedded database each child's start-up makes it take most of a minute,
 * which the suite's budget does not have; the campaign covers PGlite.
 */
describe('effect tools survive SIGKILL (smoke)', () => {
  it.skipIf(!process.env['DATABASE_URL'])(
    'Linear and GitHub reconcile to exactly one issue each; Slack is never posted twice',
    async () => {
      const seed = process.env['MESH_TEST_SEED']
        ? Number(process.env['MESH_TEST_SEED'])
        : undefined;
      const result = await runEffectCampaign({
        database: 'postgres',
        runs: 1,
        kills: 2,
        ...(seed === undefined ? {} : { seed }),
      });
      // Each assertion carries the summary line: a failure names the seed and each unsettled call.
      const line = effectSummaryLine(result);
      console.log(line);
      expect(result.problems, line).toEqual([]);
      expect(result.kills, line).toBe(2);
      expect(result.duplicateEffects, line).toBe(0);
      expect(result.linearUnsettled, line).toBe(0);
      expect(result.githubUnsettled, line).toBe(0);
      expect(result.slackMisreported, line).toBe(0);
      expect(result.unfinishedRuns, line).toBe(0);
    },
    120_000,
  );
});
