import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.ts';
import { testDatabases } from '../support/db.ts';

const postgres = testDatabases().filter((d) => d.name === 'postgres');

/*
 * The reads lane on a real PostgreSQL: statements issued together share one round trip on one
 * pipelined connection, and each is still answered on its own.
 */
describe.skipIf(postgres.length === 0)('reads issued together (PostgreSQL pipeline)', () => {
  let db: Db;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const database = postgres[0];
    if (!database) return;
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
  }, 60_000);
  afterAll(async () => {
    await dispose?.();
  });

  const backend = async (q: { query: Db['query'] }, n: number) =>
    (await q.query<{ pid: number; n: number }>('select pg_backend_pid() as pid, $1::int as n', [n]))
      .rows[0];

  it('answers each of many reads with its own rows, on one backend', async () => {
    const reads = db.reads;
    expect(reads).toBeDefined();
    if (!reads) return;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => backend(reads, i)));
    expect(answers.map((a) => a?.n)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    // Issued in one turn of the event loop, they went to the server together: one connection.
    expect(new Set(answers.map((a) => a?.pid)).size).toBe(1);
  });

  it('fails only the statement that failed; the others in its batch are answered', async () => {
    const reads = db.reads;
    if (!reads) return;
    const [before, bad, after] = await Promise.allSettled([
      reads.query<{ v: number }>('select $1::int as v', [1]),
      reads.query('select 1 / $1::int as v', [0]),
      reads.query<{ v: number }>('select $1::int as v', [3]),
    ]);
    expect(before.status === 'fulfilled' && before.value.rows[0]?.v).toBe(1);
    expect(bad.status).toBe('rejected');
    if (bad.status === 'rejected')
      expect(bad.reason).toMatchObject({ code: 'database_error', data: { sqlstate: '22012' } });
    expect(after.status === 'fulfilled' && after.value.rows[0]?.v).toBe(3);
    // The connection is still good for the next batch.
    expect((await backend(reads, 7))?.n).toBe(7);
  });

  it('joins a read issued after an already-settled await to the same batch', async () => {
    const reads = db.reads;
    if (!reads) return;
    const later = async () => {
      await Promise.resolve();
      return backend(reads, 2);
    };
    const [a, b] = await Promise.all([backend(reads, 1), later()]);
    expect([a?.n, b?.n]).toEqual([1, 2]);
    expect(a?.pid).toBe(b?.pid);
  });
});
