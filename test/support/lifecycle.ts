import { createGuardedFetch } from '../../src/egress/guarded-fetch.ts';
import { catalog } from '../../src/generated/catalog.ts';
import {
  configVersionOf,
  LifecycleError,
  type LifecycleOptions,
} from '../../src/lifecycle/contract.ts';
import { createLifecycleExecutor } from '../../src/lifecycle/executor.ts';
import { loadCatalog } from '../../src/manifest/verify-catalog.ts';
import type { JsonValue } from '../../src/model/json.ts';
import type { Db } from '../../src/store/db.ts';
import { lifecycleStore } from '../../src/store/lifecycle.ts';
import { services } from '../../src/tool/context.ts';

const loaded = loadCatalog(catalog);

/** The catalog's package as the lifecycle sees it (its real, bound hooks). */
export function catalogPackage(packageId: string) {
  const pkg = loaded.packages.find((p) => p.manifest.package.id === packageId);
  if (!pkg) return undefined;
  return {
    id: packageId,
    version: pkg.manifest.package.version,
    digest: pkg.digest,
    hooks: loaded.hooks.get(packageId) ?? {},
    inFlight: pkg.manifest.package.inFlight,
  };
}

/** What a test install holds: its config values and secrets (kind → value, with a version). */
export interface TestInstall {
  config: Record<string, JsonValue>;
  secrets: Record<string, { value: string; version: number }>;
}

/**
 * A lifecycle executor over `db` for the catalog's real packages, each install's config and
 * secrets taken from `installs` (by package id) instead of the secret store: what the crash and
 * race children and the executor tests drive.
 */
export function testLifecycle(
  db: Db,
  installs: Record<string, TestInstall>,
  options: Partial<LifecycleOptions> = {},
) {
  return createLifecycleExecutor({
    store: lifecycleStore(db),
    packageOf: catalogPackage,
    async contextFor(_agentId, packageId) {
      const install = installs[packageId] ?? { config: {}, secrets: {} };
      return {
        config: install.config,
        configVersion: configVersionOf(install.config),
        secretVersion:
          Object.entries(install.secrets)
            .map(([kind, s]) => `${kind}@${s.version}`)
            .join(',') || 'none',
        async secret(kind) {
          const held = install.secrets[kind];
          if (!held)
            throw new LifecycleError('secret_missing', `${packageId} has no ${kind} captured`);
          return held.value;
        },
        fetch: createGuardedFetch({ allowLoopbackHttp: true }),
        services: services([]),
      };
    },
    sleep: async () => undefined,
    ...options,
  });
}

/** The Linear install a test enables: the fake's endpoint, a webhook target, the agent's key. */
export function linearInstall(apiUrl: string, key: string): TestInstall {
  return {
    config: {
      api_url: apiUrl,
      allow_loopback_http: true,
      webhook_url: 'http://127.0.0.1:9/hooks/linear',
    },
    secrets: { linear_api_key: { value: key, version: 1 } },
  };
}
