import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunLedger } from '../../src/run/ledger.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { connect } from '../../src/store/connect.ts';
import { migrate } from '../../src/store/migrate.ts';
import { runStore } from '../../src/store/run-store.ts';
import { bundleChild, runChild } from '../crash/campaign.ts';
import { freshPostgresUrl } from '../support/postgres.ts';

/*
 * A run whose process dies mid-call every time it is resumed (a frozen validator, a handler that
 * exhausts memory) must not be resumed forever: real worker processes SIGKILL themselves right
 * after the call ran, before its observation is kept, and are started again. After the fourth kill
 * (one more than the three a worker allows) the next process ends the run failed instead of
 * running the call a fifth time.
 */
const databases = ['pglite', ...(process.env['DATABASE_URL'] ? ['postgres'] : [])] as const;

describe.each(databases)('a run killed mid-call on every resume, on %s', (database) => {
  let counter: Server;
  let counterUrl: string;
  let reads = 0;
  let home: string;
  let childPath: string;
  let drop: () => Promise<void> = async () => undefined;
  let dbEnv: NodeJS.ProcessEnv;
  let open: () => ReturnType<typeof connect>;

  beforeAll(async () => {
    counter = createServer((req, res) => {
      if (req.url?.startsWith('/read')) reads++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
    counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
    home = mkdtempSync(join(tmpdir(), 'mesh-interrupted-'));
    const here = dirname(fileURLToPath(import.meta.url));
    childPath = await bundleChild(join(here, '..', '..', 'test-output'));
    if (database === 'postgres') {
      const fresh = await freshPostgresUrl();
      drop = () => fresh.drop();
      dbEnv = { DATABASE_URL: fresh.url };
      open = () => connect({ databaseUrl: fresh.url });
    } else {
      dbEnv = { MESH_HOME: home, DATABASE_URL: '' };
      open = () => connect({ meshHome: home, oneShot: true });
    }
  });

  afterAll(async () => {
    await new Promise((resolve) => counter?.close(resolve));
    await drop();
    rmSync(home, { recursive: true, force: true });
  });

  it('ends it failed after the fourth kill, without running the call again', async () => {
    const agentId = randomUUID();
    let db = await open();
    await migrate(db);
    await insertAgent(db, { id: agentId, name: 'interrupted-agent' });
    const run = await new RunLedger(runStore(db)).createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'interrupted-test' },
      budget: { maxToolCalls: 10 },
      checkpoint: scriptCheckpoint([{ id: 'c0', name: 'read_effect', arguments: '{}' }]),
    });
    // The embedded database is single-process: the parent lets go while a child works.
    await db.close();

    const env = {
      ...dbEnv,
      COUNTER_URL: counterUrl,
      // Long enough that a child slowed by a loaded machine keeps its lease: renewed every 1.3 s,
      // it lapses only after a 2.7 s stall (a lapse is an interruption too: at 2 s, with a 1.3 s
      // stall enough, one was seen in CI). Each kill's lease lapses before the next child can
      // claim the run, so each kill costs the test that long.
      LEASE_MS: '4000',
      MAX_INTERRUPTIONS: '3',
      KILL_POINT: 'after_execute',
      KILL_NTH: '1',
    };
    const kills: string[] = [];
    for (let i = 0; i < 5; i++) {
      const outcome = await runChild(childPath, env, undefined);
      if (!outcome.killed) {
        expect(outcome.stderr).toBe('');
        break;
      }
      kills.push(`${outcome.killedAt?.point ?? 'timer'} ${outcome.killedAt?.callId ?? ''}`);
    }
    expect(kills).toEqual(Array.from({ length: 4 }, () => 'after_execute c0'));
    // The call ran once per process that was killed in it, and not in the process that ended it.
    expect(reads).toBe(4);

    db = await open();
    const { rows } = await db.query<{ status: string; reason: string; interruptions: number }>(
      'select status, reason, interruptions from runs where id = $1',
      [run.id],
    );
    await db.close();
    expect(rows[0]?.status).toBe('failed');
    expect(rows[0]?.interruptions).toBe(4);
    expect(rows[0]?.reason).toMatch(
      /^not resumed: the process running it died or was stopped 4 times/,
    );
  }, 120_000);
});
