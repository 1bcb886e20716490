import { describe, expect, inject, it } from 'vitest';
import { runCampaign, summaryLine, type CampaignResult } from './campaign.ts';

/**
 * A smoke run of the crash campaign: a few real worker processes killed with SIGKILL and resumed.
 * The long campaigns (hundreds of kills on PostgreSQL, more on the embedded database) are
 * `npm run test:crash`, which CI runs after the suite. MESH_TEST_SEED replays a printed seed.
 */
const seed = process.env['MESH_TEST_SEED'] ? Number(process.env['MESH_TEST_SEED']) : undefined;

function expectTruthful(result: CampaignResult, minKills: number): void {
  console.log(summaryLine(result));
  expect(result.problems).toEqual([]);
  expect(result.kills).toBeGreaterThanOrEqual(minKills);
  expect(result.duplicateEffects).toBe(0);
  expect(result.lostSteps).toBe(0);
  expect(result.unreportedInterruptions).toBe(0);
  expect(result.unfinishedRuns).toBe(0);
}

describe('crash safety with real processes killed by SIGKILL (smoke)', () => {
  it.skipIf(!process.env['DATABASE_URL'])(
    'on PostgreSQL: no duplicate effect, no lost step, every cut effect reported unknown',
    async () => {
      const result = await runCampaign({
        database: 'postgres',
        runs: 6,
        minKills: 6,
        maxKills: 6,
        ...(seed === undefined ? {} : { seed }),
      });
      // Each kill after a commit stamp and before its observation must be reported unknown
      // (unreportedInterruptions); the long campaign in CI makes hundreds of them.
      expectTruthful(result, 6);
    },
    120_000,
  );

  it('on the embedded database: the same guarantees across process restarts', async () => {
    const result = await runCampaign({
      database: 'pglite',
      homeTemplate: inject('meshHomeTemplate'),
      runs: 1,
      minKills: 1,
      maxKills: 1,
      ...(seed === undefined ? {} : { seed }),
    });
    expectTruthful(result, 1);
  }, 120_000);
});
