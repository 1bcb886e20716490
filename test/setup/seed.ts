/**
 * One seed per test file for everything randomized: fast-check's properties draw from it, and a
 * failing test prints it. `MESH_TEST_SEED=S npx vitest run FILE` replays a printed seed.
 */
import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { afterEach } from 'vitest';

const given = process.env['MESH_TEST_SEED'];
const seed = given === undefined || given === '' ? randomInt(2 ** 31) : Number(given);
if (!Number.isSafeInteger(seed)) throw new Error('MESH_TEST_SEED must be an integer');

fc.configureGlobal({ seed });

afterEach(({ task }) => {
  if (task.result?.state === 'fail') {
    console.log(
      `seed=${seed}: replay with MESH_TEST_SEED=${seed} npx vitest run ${task.file.name}`,
    );
  }
});
