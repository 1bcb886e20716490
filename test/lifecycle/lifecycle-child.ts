/**
 * A worker process for the lifecycle crash and race tests: opens the database, drives the real
 * mesh.linear hooks through the lifecycle executor against the Linear fake, and prints one JSON
 * line per request. The parent kills it with SIGKILL where it wants (inside a hook, after the fake
 * acted and before it answered), or races two of them on one install.
 */
import { writeSync } from 'node:fs';
import { connect } from '../../src/store/connect.ts';
import { linearInstall, testLifecycle } from '../support/lifecycle.ts';

const env = process.env;
const db = await connect({
  ...(env['DATABASE_URL'] ? { databaseUrl: env['DATABASE_URL'] } : {}),
  ...(env['MESH_HOME'] ? { meshHome: env['MESH_HOME'] } : {}),
  poolSize: 4,
});
const lifecycle = testLifecycle(db, {
  'mesh.linear': linearInstall(env['LINEAR_URL'] ?? '', env['LINEAR_KEY'] ?? ''),
});
const agentId = env['AGENT_ID'] ?? '';
const actor = env['ACTOR'] ?? 'operator:crash-test';
const action = env['ACTION'] ?? 'enable';
const repeat = Number(env['REPEAT'] ?? '1');
// Racing children start together: each says it is ready once its database is open, and waits
// for the parent's go on standard input.
if (env['BARRIER'] === '1') {
  writeSync(1, 'READY\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  process.stdin.pause();
}

for (let i = 0; i < repeat; i++) {
  let line: unknown;
  try {
    if (action === 'resume') line = { resumed: await lifecycle.resumeUnfinished() };
    else if (action === 'retry' || action === 'abandon') {
      const done = await lifecycle.compensate(agentId, 'mesh.linear', action, actor);
      line = { state: done.install.state, outcome: done.transition?.outcome ?? null };
    } else {
      const done = await lifecycle.request({
        agentId,
        packageId: 'mesh.linear',
        action: action as 'enable' | 'disable',
        actor,
      });
      line = { state: done.install.state, outcome: done.transition?.outcome ?? null };
    }
  } catch (error) {
    line = { error: (error as { code?: string }).code ?? String(error) };
  }
  writeSync(1, `${JSON.stringify(line)}\n`);
}
await db.close();
