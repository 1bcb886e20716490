import { createGuardedFetch } from '../../egress/guarded-fetch.ts';
import { configVersionOf, LifecycleError } from '../../lifecycle/contract.ts';
import { createLifecycleExecutor, type LifecycleExecutor } from '../../lifecycle/executor.ts';
import type {
  CompensationRecord,
  InstallRecord,
  InstallState,
  TransitionRecord,
} from '../../lifecycle/records.ts';
import { HOOK_NAMES, type ToolPackage } from '../../manifest/package-manifest.ts';
import { agentToolOwnerId } from '../../secrets/secret-input.ts';
import { lifecycleStore } from '../../store/lifecycle.ts';
import { deleteConfigValue, listConfigValues } from '../../store/tool-policy.ts';
import { validateConfigValue } from '../../policy/config-values.ts';
import type { Mesh } from '../mesh.ts';
import { MeshError } from '../../tool/errors.ts';
import { agentConfig } from './policy.ts';

/*
 * Package installs for the faces: each agent's enablement of a package, moved only through the
 * lifecycle executor, with its transition history and open compensation tasks.
 */

const executors = new WeakMap<Mesh, LifecycleExecutor>();

/** The lifecycle executor of this Mesh: its catalog's packages and hooks, its secrets and config. */
export function lifecycleOf(mesh: Mesh): LifecycleExecutor {
  const known = executors.get(mesh);
  if (known) return known;
  const executor = createLifecycleExecutor({
    store: lifecycleStore(mesh.db),
    async captureSecret(agentId, packageId, kind, value) {
      await mesh.secrets.capture({
        ownerType: 'agent_tool',
        ownerId: agentToolOwnerId(agentId, packageId),
        kind,
        value,
      });
    },
    packageOf(packageId) {
      const pkg = mesh.catalog.packages.find((p) => p.manifest.package.id === packageId);
      if (!pkg) return undefined;
      return {
        id: packageId,
        version: pkg.manifest.package.version,
        digest: pkg.digest,
        hooks: mesh.catalog.hooks.get(packageId) ?? {},
        inFlight: pkg.manifest.package.inFlight,
      };
    },
    migrateConfig: (agentId, packageId) => migrateConfig(mesh, agentId, packageId),
    async contextFor(agentId, packageId) {
      const config = (await agentConfig(mesh, agentId))(packageId);
      const owner = {
        ownerType: 'agent_tool' as const,
        ownerId: agentToolOwnerId(agentId, packageId),
      };
      const held = await mesh.secrets.describe(owner);
      return {
        config,
        configVersion: configVersionOf(config),
        secretVersion: held.map((s) => `${s.kind}@${s.version}`).join(',') || 'none',
        async secret(kind) {
          const value = await mesh.secrets.reveal({ ...owner, kind });
          if (value === undefined)
            throw new LifecycleError(
              'secret_missing',
              `${packageId} has no ${kind} captured for this agent`,
            );
          return value;
        },
        fetch: createGuardedFetch({
          allowLoopbackHttp: config['allow_loopback_http'] === true,
          pools: mesh.egress,
        }),
        services: mesh.services,
      };
    },
  });
  executors.set(mesh, executor);
  return executor;
}

/**
 * An upgrade's config migration: the agent's stored values of the package checked against the
 * manifest now running. A key it no longer declares (or now declares secret) is dropped; a value
 * it no longer accepts is reset to the default. Says what changed (keys, never values).
 */
async function migrateConfig(
  mesh: Mesh,
  agentId: string,
  packageId: string,
): Promise<string | undefined> {
  const pkg = mesh.catalog.packages.find((p) => p.manifest.package.id === packageId);
  if (!pkg) return undefined;
  const changes: string[] = [];
  for (const row of await listConfigValues(mesh.db, agentId)) {
    if (row.packageId !== packageId) continue;
    const field = pkg.manifest.config.find((f) => f.key === row.key);
    let why: string | undefined;
    if (!field || field.disposition === 'secret') why = `dropped ${row.key} (no longer declared)`;
    else {
      try {
        validateConfigValue(mesh.catalog.packages, packageId, row.key, row.value);
      } catch {
        why = `reset ${row.key} to its default (its value is no longer valid)`;
      }
    }
    if (why === undefined) continue;
    await deleteConfigValue(mesh.db, agentId, packageId, row.key);
    changes.push(why);
  }
  return changes.length > 0 ? changes.join(', ') : undefined;
}

/**
 * After an agent's config value of a package changed: an enabled install of a package with an
 * `on_enable` hook is reconfigured (the hook runs again, so what enabling made matches the new
 * values). A failure parks the install in error with a compensation task and is refused here, so
 * the operator who changed the value sees it; the value stays stored.
 */
export async function applyConfig(
  mesh: Mesh,
  agentId: string,
  pkg: ToolPackage,
  actor: string,
): Promise<void> {
  if (!enableRequired(pkg)) return;
  const packageId = pkg.manifest.package.id;
  const install = await lifecycleStore(mesh.db).findInstall(agentId, packageId);
  if (install?.state !== 'enabled') return;
  const done = await lifecycleOf(mesh).request({
    agentId,
    packageId,
    action: 'reconfigure',
    actor,
  });
  if (done.transition?.outcome === 'failed')
    throw new MeshError(
      'config_not_applied',
      `the value is stored, but ${packageId}'s on_enable could not apply it (${done.transition.error ?? 'it failed'}); the install is in error until its compensation task is retried or abandoned`,
    );
}

/** Whether a package needs an explicit enable before it is offered (it has an `on_enable` hook). */
export function enableRequired(pkg: ToolPackage): boolean {
  return pkg.manifest.hooks.on_enable !== undefined;
}

/** An install as the API shows it. */
export interface InstallAnswer {
  readonly agent_id: string;
  readonly package: string;
  /**
   * For a package never installed, where it starts: `disabled` when it has an on_enable hook,
   * else `enabled` (built-in tools are on by default).
   */
  readonly state: InstallState;
  /** Whether the package's tools are offered by this install's state (other gates aside). */
  readonly offered: boolean;
  /** The lifecycle junctures the package has hooks for (what enabling, disabling… will run). */
  readonly hooks: readonly string[];
  readonly pinned: { readonly version: string; readonly digest: string } | null;
  /**
   * An enabled install pinned to another build of its package than the one running (Mesh was
   * upgraded under it): what runs now, and since when the sweep has seen it. It is moved only by
   * an operator (`packages upgrade`) or their standing instruction; null when not drifted.
   */
  readonly drift: {
    readonly running_version: string;
    readonly running_digest: string;
    readonly seen_at: string | null;
  } | null;
  readonly transitions: readonly TransitionAnswer[];
  readonly compensations: readonly CompensationAnswer[];
}

export interface TransitionAnswer {
  readonly seq: number;
  readonly action: string;
  readonly requested_by: string;
  readonly from: string;
  readonly to: string;
  readonly outcome: string;
  readonly attempts: number;
  readonly error: string | null;
  /** What it did besides its hook (a disable's drained or cancelled calls). */
  readonly detail: string | null;
  readonly package_version: string;
  readonly package_digest: string;
  readonly config_version: string;
  readonly secret_version: string;
  readonly idempotency_key: string;
  readonly created_at: string;
  readonly finished_at: string | null;
}

export interface CompensationAnswer {
  readonly id: string;
  readonly action: string;
  readonly reason: string;
  readonly state: string;
  readonly resolved_by: string | null;
  readonly created_at: string;
}

const transitionAnswer = (t: TransitionRecord): TransitionAnswer => ({
  seq: t.seq,
  action: t.action,
  requested_by: t.requestedBy,
  from: t.fromState,
  to: t.toState,
  outcome: t.outcome,
  attempts: t.attempts,
  error: t.error,
  detail: t.detail,
  package_version: t.packageVersion,
  package_digest: t.packageDigest,
  config_version: t.configVersion,
  secret_version: t.secretVersion,
  idempotency_key: t.idempotencyKey,
  created_at: t.createdAt.toISOString(),
  finished_at: t.finishedAt?.toISOString() ?? null,
});

const compensationAnswer = (c: CompensationRecord): CompensationAnswer => ({
  id: c.id,
  action: c.action,
  reason: c.reason,
  state: c.state,
  resolved_by: c.resolvedBy,
  created_at: c.createdAt.toISOString(),
});

/** One agent's install of one package, with its history and compensation tasks. */
export async function installAnswer(
  mesh: Mesh,
  agentId: string,
  pkg: ToolPackage,
  install?: InstallRecord,
): Promise<InstallAnswer> {
  const store = lifecycleStore(mesh.db);
  const packageId = pkg.manifest.package.id;
  const found = install ?? (await store.findInstall(agentId, packageId));
  const [history, compensations] = found
    ? await Promise.all([store.history(found.id), store.compensations(found.id)])
    : [[], []];
  const state = found?.state ?? (enableRequired(pkg) ? 'disabled' : 'enabled');
  return {
    agent_id: agentId,
    package: packageId,
    state,
    offered: state === 'enabled',
    hooks: HOOK_NAMES.filter((h) => pkg.manifest.hooks[h] !== undefined),
    pinned: found ? { version: found.packageVersion, digest: found.packageDigest } : null,
    drift:
      found?.state === 'enabled' && found.packageDigest !== pkg.digest
        ? {
            running_version: pkg.manifest.package.version,
            running_digest: pkg.digest,
            seen_at: found.driftSeenAt?.toISOString() ?? null,
          }
        : null,
    transitions: history.map(transitionAnswer),
    compensations: compensations.map(compensationAnswer),
  };
}
