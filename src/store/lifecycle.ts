import { randomUUID } from 'node:crypto';
import type {
  CompensationRecord,
  InstallRecord,
  InstallState,
  LifecycleStore,
  NewTransition,
  TransitionRecord,
} from '../lifecycle/records.ts';
import { StoreError, type Db } from './db.ts';

const INSTALL = `id, agent_id::text as "agentId", package_id as "packageId", state,
  package_version as "packageVersion", package_digest as "packageDigest", hook_state as "hookState",
  drift_seen_at as "driftSeenAt", created_at as "createdAt", updated_at as "updatedAt"`;
const TRANSITION = `id, install_id::text as "installId", seq, action, requested_by as "requestedBy",
  from_state as "fromState", to_state as "toState", outcome, package_version as "packageVersion",
  package_digest as "packageDigest", config_version as "configVersion",
  secret_version as "secretVersion", idempotency_key as "idempotencyKey", attempts, error,
  detail, created_at as "createdAt", finished_at as "finishedAt"`;
const COMPENSATION = `id, install_id::text as "installId", transition_id::text as "transitionId",
  action, reason, state, resolved_by as "resolvedBy", resolved_at as "resolvedAt",
  created_at as "createdAt"`;

/** The advisory lock class of installs (the key is the install's agent and package). */
const INSTALL_LOCK_CLASS = 20_020;
const MAX_ERROR = 2000;

const clip = (error: string) =>
  error.length > MAX_ERROR ? `${error.slice(0, MAX_ERROR - 1)}…` : error;

function only<R>(rows: R[], what: string): R {
  const row = rows[0];
  if (row === undefined)
    throw new StoreError('lifecycle_row_missing', `the ${what} is not recorded`);
  return row;
}

/**
 * One process's locks of installs, for the embedded database (one process holds it, so its
 * locks are the only ones): a chain of promises per key.
 */
function inProcessLocks() {
  const tails = new Map<string, Promise<void>>();
  return async <T>(key: string, fn: () => Promise<T>, wait: boolean): Promise<T | undefined> => {
    const before = tails.get(key);
    if (before && !wait) return undefined;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = (before ?? Promise.resolve()).then(() => mine);
    tails.set(key, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

/** The embedded database's install locks, one set per open database. */
const embeddedLocks = new WeakMap<Db, ReturnType<typeof inProcessLocks>>();

/** The installs: found or made, listed, and those a sweep looks at (drifted, cut by a crash). */
function installRows(
  db: Db,
): Pick<
  LifecycleStore,
  'install' | 'findInstall' | 'listInstalls' | 'recordDrift' | 'enabledInstalls' | 'withUnfinished'
> {
  return {
    async install(agentId, packageId, pin, initial): Promise<InstallRecord> {
      const { rows } = await db.query<InstallRecord>(
        `with inserted as (
         insert into package_installs (id, agent_id, package_id, state, package_version, package_digest)
         values ($1::uuid, $2::uuid, $3, $6, $4, $5)
         on conflict (agent_id, package_id) do nothing
         returning ${INSTALL})
       select * from inserted
       union all
       select ${INSTALL} from package_installs where agent_id = $2::uuid and package_id = $3
       limit 1`,
        [randomUUID(), agentId, packageId, pin.version, pin.digest, initial],
      );
      return only(rows, 'install');
    },

    async findInstall(agentId, packageId) {
      const { rows } = await db.query<InstallRecord>(
        `select ${INSTALL} from package_installs where agent_id = $1::uuid and package_id = $2`,
        [agentId, packageId],
      );
      return rows[0];
    },

    async listInstalls(agentId) {
      const { rows } = await db.query<InstallRecord>(
        `select ${INSTALL} from package_installs where agent_id = $1::uuid order by package_id`,
        [agentId],
      );
      return rows;
    },

    async recordDrift(drifted) {
      // Newly drifted installs are stamped once; those that no longer drift are cleared.
      const { rows } = await db.query<{ marked: number }>(
        `with cleared as (
         update package_installs set drift_seen_at = null
          where drift_seen_at is not null and not (id = any($1::uuid[]))),
       marked as (
         update package_installs set drift_seen_at = now()
          where id = any($1::uuid[]) and drift_seen_at is null returning id)
       select count(*)::int as marked from marked`,
        [drifted],
      );
      return rows[0]?.marked ?? 0;
    },

    async enabledInstalls() {
      const { rows } = await db.query<InstallRecord>(
        `select ${INSTALL} from package_installs where state = 'enabled' order by updated_at`,
      );
      return rows;
    },

    async withUnfinished() {
      const { rows } = await db.query<InstallRecord>(
        `select ${INSTALL} from package_installs i
        where exists (select 1 from lifecycle_transitions t
                       where t.install_id = i.id and t.outcome = 'running')
        order by i.updated_at`,
      );
      return rows;
    },
  };
}

/** The transitions: begun, attempted, noted and finished, each write durable at once. */
function transitionRows(
  db: Db,
): Pick<
  LifecycleStore,
  'unfinished' | 'begin' | 'attempt' | 'noteRetry' | 'noteDetail' | 'finish' | 'history'
> {
  return {
    async unfinished(installId) {
      const { rows } = await db.query<TransitionRecord>(
        `select ${TRANSITION} from lifecycle_transitions
        where install_id = $1::uuid and outcome = 'running'`,
        [installId],
      );
      return rows[0];
    },

    async begin(t: NewTransition, installState: InstallState): Promise<TransitionRecord> {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<TransitionRecord>(
          `insert into lifecycle_transitions (id, install_id, seq, action, requested_by, from_state,
           to_state, package_version, package_digest, config_version, secret_version, idempotency_key)
         values ($1::uuid, $2::uuid,
           (select coalesce(max(seq), 0) + 1 from lifecycle_transitions where install_id = $2::uuid),
           $3, $4, $5, $6, $7, $8, $9, $10, $11)
         returning ${TRANSITION}`,
          [
            t.id,
            t.installId,
            t.action,
            t.requestedBy,
            t.fromState,
            t.toState,
            t.packageVersion,
            t.packageDigest,
            t.configVersion,
            t.secretVersion,
            t.idempotencyKey,
          ],
        );
        await tx.query(
          `update package_installs set state = $2, updated_at = now() where id = $1::uuid`,
          [t.installId, installState],
        );
        return only(rows, 'transition');
      });
    },

    async attempt(transitionId) {
      const { rows } = await db.query<TransitionRecord>(
        `update lifecycle_transitions set attempts = attempts + 1
        where id = $1::uuid and outcome = 'running' returning ${TRANSITION}`,
        [transitionId],
      );
      return only(rows, 'running transition');
    },

    async noteRetry(transitionId, reason) {
      await db.query(`update lifecycle_transitions set error = $2 where id = $1::uuid`, [
        transitionId,
        clip(reason),
      ]);
    },

    async noteDetail(transitionId, detail) {
      await db.query(`update lifecycle_transitions set detail = $2 where id = $1::uuid`, [
        transitionId,
        clip(detail),
      ]);
    },

    async finish(t, end) {
      await db.transaction(async (tx) => {
        const { rowCount } = await tx.query(
          `update lifecycle_transitions set outcome = $2, error = $3, finished_at = clock_timestamp()
          where id = $1::uuid and outcome = 'running'`,
          [t.id, end.outcome, end.error === undefined ? null : clip(end.error)],
        );
        if (rowCount !== 1)
          throw new StoreError('lifecycle_row_missing', 'the running transition is not recorded');
        await tx.query(
          `update package_installs set state = $2, package_version = $3, package_digest = $4,
           hook_state = coalesce($5::jsonb, hook_state), updated_at = now() where id = $1::uuid`,
          [
            t.installId,
            end.installState,
            t.packageVersion,
            t.packageDigest,
            end.hookState === undefined ? null : JSON.stringify(end.hookState),
          ],
        );
        if (end.outcome === 'failed' && end.compensate !== false)
          await tx.query(
            `insert into lifecycle_compensations (id, install_id, transition_id, action, reason)
           values ($1::uuid, $2::uuid, $3::uuid, $4, $5)`,
            [randomUUID(), t.installId, t.id, t.action, clip(end.error ?? 'the transition failed')],
          );
      });
    },

    async history(installId) {
      const { rows } = await db.query<TransitionRecord>(
        `select ${TRANSITION} from lifecycle_transitions where install_id = $1::uuid order by seq`,
        [installId],
      );
      return rows;
    },
  };
}

/** A disable's calls in flight, and the compensation tasks a failure leaves. */
function compensationRows(
  db: Db,
): Pick<
  LifecycleStore,
  'inFlightCalls' | 'cancelInFlight' | 'resolveCompensations' | 'compensations'
> {
  return {
    async inFlightCalls(agentId, packageId) {
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from run_steps s join runs r on r.id = s.run_id
        where r.agent_id = $1::uuid and r.status = 'running' and s.kind = 'tool_call'
          and s.status = 'started' and s.data->'package'->>'id' = $2`,
        [agentId, packageId],
      );
      return rows[0]?.n ?? 0;
    },

    async cancelInFlight(agentId, packageId) {
      // A new epoch with an expired lease: the holder's next renewal finds it lost and stops,
      // its writes are fenced from then on, and the next claim resumes the run.
      const { rowCount } = await db.query(
        `update runs r set lease_owner = 'mesh:lifecycle', lease_epoch = lease_epoch + 1,
         lease_expires_at = now() - interval '1 second', updated_at = now()
        where r.agent_id = $1::uuid and r.status = 'running'
          and exists (select 1 from run_steps s where s.run_id = r.id and s.kind = 'tool_call'
                        and s.status = 'started' and s.data->'package'->>'id' = $2)`,
        [agentId, packageId],
      );
      return rowCount;
    },

    async resolveCompensations(installId, state, actor) {
      const { rowCount } = await db.query(
        `update lifecycle_compensations set state = $2, resolved_by = $3, resolved_at = now()
        where install_id = $1::uuid and state = 'open'`,
        [installId, state, actor],
      );
      return rowCount;
    },

    async compensations(installId) {
      const { rows } = await db.query<CompensationRecord>(
        `select ${COMPENSATION} from lifecycle_compensations
        where install_id = $1::uuid order by created_at, id`,
        [installId],
      );
      return rows;
    },
  };
}

/**
 * `package_installs`, `lifecycle_transitions` and `lifecycle_compensations` as the lifecycle's
 * store. An install's lock is a transaction-scoped advisory lock held on a connection of its own
 * while the transition runs (the transition's writes go through the pool, each durable at once),
 * so a crashed holder's lock goes with its connection; on the embedded database, a lock in
 * this process.
 */
export function lifecycleStore(db: Db): LifecycleStore {
  let local = db.kind === 'pglite' ? embeddedLocks.get(db) : undefined;
  if (db.kind === 'pglite' && !local) {
    local = inProcessLocks();
    embeddedLocks.set(db, local);
  }

  return Object.freeze({
    async serialize<T>(
      agentId: string,
      packageId: string,
      fn: () => Promise<T>,
      options: { readonly wait?: boolean } = {},
    ): Promise<T | undefined> {
      const key = `${agentId}/${packageId}`;
      const wait = options.wait ?? true;
      if (local) return local(key, fn, wait);
      return db.transaction(async (tx) => {
        if (wait) {
          await tx.query('select pg_advisory_xact_lock($1::int, hashtext($2::text))', [
            INSTALL_LOCK_CLASS,
            key,
          ]);
        } else {
          const { rows } = await tx.query<{ locked: boolean }>(
            'select pg_try_advisory_xact_lock($1::int, hashtext($2::text)) as locked',
            [INSTALL_LOCK_CLASS, key],
          );
          if (!rows[0]?.locked) return undefined;
        }
        return fn();
      });
    },
    ...installRows(db),
    ...transitionRows(db),
    ...compensationRows(db),
  });
}
