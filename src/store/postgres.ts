import { createHash } from 'node:crypto';
import pg from 'pg';
import {
  describeDatabaseUrl,
  redact,
  StoreError,
  type Db,
  type Queryable,
  type QueryResult,
} from './db.ts';
import { pipelinedReads } from './pipelined-reads.ts';

/**
 * How this pool reads column values: timestamps as Date, bigint counts as numbers (sizes and
 * counters fit in 2^53), jsonb by the driver's JSON parsing. Set per pool, not on the driver's
 * global table, so another library's pool in the same process reads its own way.
 */
const INT8_OID: number = pg.types.builtins.INT8;
const readCount = (v: string): number => Number(v);
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8_OID && format !== 'binary'
      ? readCount
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const statementNames = new Map<string, string>();

function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `mesh_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/** Options for a node-postgres pool. */
export interface PostgresOptions {
  readonly url: string;
  readonly max?: number;
  readonly connectTimeoutMs?: number;
}

/**
 * Whether a failure says the server could not be reached or went away, rather than refused the
 * statement: a socket error, a connect timeout, a dropped connection, SQLSTATE class 08
 * (connection exception), a shutdown (57P01-57P03) or no connection slot left (53300).
 */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (/^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE…
    if (code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300') return true;
  }
  const message = error instanceof Error ? error.message : '';
  return /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(
    message,
  );
}

function wrap(error: unknown, url: string): StoreError {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (isConnectionFailure(error)) {
    return new StoreError(
      'database_unreachable',
      `lost PostgreSQL at ${describeDatabaseUrl(url)}: ${redact(message, url)}`,
      undefined,
      { cause: error },
    );
  }
  return new StoreError(
    'database_error',
    redact(message, url),
    code ? { sqlstate: code } : undefined,
    {
      cause: error,
    },
  );
}

/** A pool of at most `max` connections to the server `options` names. */
function poolOf(options: PostgresOptions, max: number, extra: object = {}): pg.Pool {
  return new pg.Pool({
    connectionString: options.url,
    max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    types: TYPES,
    ...extra,
  });
}

/** A connection of its own that LISTENs on `channel`, until the returned function ends it. */
async function listenOn(
  options: PostgresOptions,
  channel: string,
  onPayload: (payload: string) => void,
  onLost: () => void,
): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel))
    throw new StoreError('store_misuse', 'a channel is a lowercase identifier');
  const client = new pg.Client({
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  let stopping = false;
  const lost = () => {
    if (!stopping) onLost();
  };
  client.on('error', lost);
  client.on('end', lost);
  client.on('notification', (message) => {
    if (message.channel === channel && message.payload !== undefined) onPayload(message.payload);
  });
  try {
    await client.connect();
    await client.query(`listen ${channel}`);
  } catch (error) {
    stopping = true;
    await client.end().catch(() => undefined);
    throw wrap(error, options.url);
  }
  return async () => {
    stopping = true;
    await client.end().catch(() => undefined);
  };
}

/** Opens a pool on a PostgreSQL server and proves it reachable, failing fast naming the host. */
export async function openPostgres(options: PostgresOptions): Promise<Db> {
  const pool = poolOf(options, options.max ?? 10);
  // The lease lane: two connections that only renew and release leases (see Db.leases).
  const leasePool = poolOf(options, 2);
  // The reads lane: pipelined connections for independent reads issued together (see Db.reads).
  // node-postgres's pipeline mode (8.23): queued statements are sent without waiting.
  const readPool = poolOf(options, 2, { pipeline: true });
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  leasePool.on('error', () => undefined);
  readPool.on('error', () => undefined);
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    await leasePool.end().catch(() => undefined);
    await readPool.end().catch(() => undefined);
    const reason = redact(error instanceof Error ? error.message : String(error), options.url);
    throw new StoreError(
      'database_unreachable',
      `cannot reach PostgreSQL at ${describeDatabaseUrl(options.url)}: ${reason}`,
    );
  }

  const run = async <R>(
    client: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
  ) => {
    try {
      // Parameterized statements are prepared once per connection (named by their text's hash):
      // the ledger's statements are sent thousands of times, and parsing them is not free.
      const result =
        params === undefined
          ? await client.query(sql)
          : await client.query({
              name: statementName(sql),
              text: sql,
              values: params as unknown[],
            });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 } satisfies QueryResult<R>;
    } catch (error) {
      throw wrap(error, options.url);
    }
  };

  return {
    kind: 'postgres',
    poolStats: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
    query: (sql, params) => run(pool, sql, params),
    exec: async (sql) => {
      await run(pool, sql);
    },
    listen: (channel, onPayload, onLost) => listenOn(options, channel, onPayload, onLost),
    reads: pipelinedReads(readPool, run, (error) => wrap(error, options.url)),
    leases: {
      query: (sql, params) => run(leasePool, sql, params),
      exec: async (sql) => {
        await run(leasePool, sql);
      },
    },
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw wrap(error, options.url);
      }
      // A client that failed mid-transaction is destroyed, not returned to the pool.
      let broken: Error | undefined;
      try {
        await run(client, 'begin');
        const tx: Queryable = {
          query: (sql, params) => run(client, sql, params),
          exec: async (sql) => {
            await run(client, sql);
          },
        };
        const result = await fn(tx);
        await run(client, 'commit');
        return result;
      } catch (error) {
        try {
          await client.query('rollback');
        } catch (rollbackError) {
          broken =
            rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async close() {
      await Promise.all([pool.end(), leasePool.end(), readPool.end()]);
    },
  };
}
