import { describe, expect, it } from 'vitest';
import { runCampaign, summaryLine, type CampaignResult } from './campaign.ts';

function expectTruthful(result: CampaignResult, minKills: number): void {
  console.log(summaryLine(result));
  expect(result.problems).toEqual([]);
  expect(result.kills).toBeGreaterThanOrEqual(minKills);
  expect(result.duplicateEffects).toBe(0);
  expect(result.lostSteps).toBe(0);
  expect(result.unreportedInterruptions).toBe(0);
  expect(result.unfinishedRuns).toBe(0);
  // Kills after a commit stamp and before its observation happen; each must have been reported.
  expect(result.unknownReported).toBeGreaterThan(0);
}

describe('crash safety with real processes killed by SIGKILL', () => {
  it.skipIf(!process.env['DATABASE_URL'])(
    'on PostgreSQL: 200+ randomized kills, no duplicate effect, no lost step, every cut effect reported unknown',
    async () => {
      const result = await runCampaign({ database: 'postgres', runs: 200, minKills: 200 });
      expectTruthful(result, 200);
    },
    300_000,
  );

  it('on the embedded database: the same guarantees across process restarts', async () => {
    const minKills = process.env['DATABASE_URL'] ? 8 : 16;
    const result = await runCampaign({ database: 'pglite', runs: 8, minKills });
    expectTruthful(result, minKills);
  }, 300_000);
});
