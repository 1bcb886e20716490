/*
 * A worker process for test/run/worker-kill.test.ts: on DATABASE_URL, with short leases, it claims
 * the run named in argv, prints CLAIMED, and works on it until it is killed.
 */
import { RunLedger } from '../../src/run/ledger.ts';
import { Worker } from '../../src/run/worker.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { runStore } from '../../src/store/run-store.ts';

const url = process.env['DATABASE_URL'];
if (!url) throw new Error('DATABASE_URL is not set');
const db = await openPostgres({ url });
const worker = new Worker({
  ledger: new RunLedger(runStore(db)),
  leaseMs: Number(process.argv[2]),
  drivers: [
    {
      kind: 'patient',
      drive: () => {
        process.stdout.write('CLAIMED\n');
        return new Promise(() => undefined); // works until killed
      },
    },
  ],
});
await worker.runOnce();
