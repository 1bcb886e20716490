import type { Socket } from 'node:net';
import type pg from 'pg';
import type { Queryable, QueryResult } from './db.ts';

interface Waiting {
  readonly sql: string;
  readonly params: readonly unknown[] | undefined;
  resolve(result: QueryResult<unknown>): void;
  reject(error: unknown): void;
}

/**
 * A Queryable whose statements, issued in the same turn of the event loop, reach the server in
 * one write and are answered in one go: node-postgres's pipeline mode on one connection of
 * `pool` (each statement still its own implicit transaction, with its own Sync, so one failing
 * leaves the others alone), the socket corked while they are queued.
 *
 * For independent reads only, such as the configuration a turn reads at its start: the server
 * runs them one after another on one backend, so a statement that waits for a lock holds up the
 * rest of its batch. On this kind of machine the kernel's loopback path costs about 0.3 ms of
 * CPU per write, one per statement, and nine reads sent at once woke nine backends.
 */
export function pipelinedReads(
  pool: pg.Pool,
  run: (
    client: pg.PoolClient,
    sql: string,
    params: readonly unknown[] | undefined,
  ) => Promise<QueryResult<unknown>>,
  wrap: (error: unknown) => Error,
): Queryable {
  let waiting: Waiting[] = [];
  let scheduled = false;

  const flush = async (): Promise<void> => {
    scheduled = false;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      const failed = waiting;
      waiting = [];
      for (const w of failed) w.reject(wrap(error));
      return;
    }
    // Whatever was queued while the connection was being handed over goes in this batch too.
    const batch = waiting;
    waiting = [];
    const stream = (client as unknown as { connection?: { stream?: Partial<Socket> } }).connection
      ?.stream;
    stream?.cork?.();
    const answers = batch.map((w) => run(client, w.sql, w.params));
    stream?.uncork?.();
    const settled = await Promise.allSettled(answers);
    let broken: Error | undefined;
    settled.forEach((s, i) => {
      const w = batch[i] as Waiting;
      if (s.status === 'fulfilled') w.resolve(s.value);
      else {
        if ((s.reason as { code?: unknown }).code === 'database_unreachable')
          broken = s.reason as Error;
        w.reject(s.reason);
      }
    });
    client.release(broken);
  };

  const enqueue = (sql: string, params?: readonly unknown[]): Promise<QueryResult<unknown>> =>
    new Promise((resolve, reject) => {
      waiting.push({ sql, params, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        // After this turn's microtasks too: a read issued after an already-settled await joins.
        setImmediate(() => void flush());
      }
    });

  return {
    query: <R>(sql: string, params?: readonly unknown[]) =>
      enqueue(sql, params) as Promise<QueryResult<R>>,
    exec: async (sql) => {
      await enqueue(sql);
    },
  };
}
