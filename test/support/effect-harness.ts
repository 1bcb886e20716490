import { randomUUID } from 'node:crypto';
import { catalog } from '../../src/generated/catalog.ts';
import { loadCatalog } from '../../src/manifest/verify-catalog.ts';
import { offerRegistry } from '../../src/policy/offer.ts';
import type { JsonValue } from '../../src/model/json.ts';
import type { OutboundEventRecord } from '../../src/outbound/records.ts';
import { createOutbox } from '../../src/outbound/outbox.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import type { Db } from '../../src/store/db.ts';
import { outboundStore } from '../../src/store/outbound-events.ts';
import { runStore } from '../../src/store/run-store.ts';
import { createGuardedFetch } from '../../src/egress/guarded-fetch.ts';
import { services, type ServiceKey, type ToolRuntime } from '../../src/tool/context.ts';
import { invoke, resolveCall } from '../../src/tool/executor.ts';
import type { Observation } from '../../src/tool/observation.ts';
import { OUTBOX } from '../../src/tool/outbound.ts';
import { freshPglite } from './db.ts';
import { makeAgent } from './run.ts';

/**
 * Runs a package's tools as a run's steps would: each call has its own step number in a real run
 * (outbound_events rows reference it), the outbound machinery over the real store, and the
 * package's config and secret as the test sets them. Waits between attempts are skipped.
 */
export interface EffectHarness {
  config: Record<string, JsonValue>;
  secret: string | undefined;
  /** Values of the package's other secret kinds, by kind (a package that needs more than one). */
  secrets: Record<string, string | undefined>;
  readonly delays: number[];
  call(
    name: string,
    args: Record<string, unknown>,
    at?: { step?: number; callId?: string },
  ): Promise<Observation>;
  events(): Promise<readonly OutboundEventRecord[]>;
  close(): Promise<void>;
}

export async function effectHarness(
  packageId: string,
  secretKind: string,
  /** Services the package's tools need besides the outbox (a workspace service, say). */
  extra: ReadonlyArray<readonly [ServiceKey<unknown>, unknown]> = [],
): Promise<EffectHarness> {
  const { registry } = loadCatalog(catalog);
  const db: Db = await freshPglite();
  const agentId = await makeAgent(db);
  const run = await new RunLedger(runStore(db)).createRun({
    agentId,
    kind: 'script',
    provenance: { kind: 'operator', operator: 'test' },
    budget: { maxToolCalls: 100 },
    checkpoint: scriptCheckpoint([]),
  });
  const store = outboundStore(db);
  const delays: number[] = [];
  const outbox = createOutbox({
    store,
    sleep: async (ms) => {
      delays.push(ms);
    },
    // The backoff's ceiling every time, so a test reads the waits it asserts.
    random: () => 1,
  });
  let step = 0;
  const harness: EffectHarness = {
    config: {},
    secret: undefined,
    secrets: {},
    delays,
    async call(name, args, at = {}) {
      const runtime: ToolRuntime = {
        agentId,
        runId: run.id,
        provenance: { kind: 'operator', operator: 'test' },
        signal: new AbortController().signal,
        services: services([[OUTBOX, outbox], ...extra]),
        configFor: (id) => (id === packageId ? harness.config : {}),
        secretFor: (id, kind) =>
          Promise.resolve(
            id !== packageId
              ? undefined
              : kind === secretKind
                ? harness.secret
                : harness.secrets[kind],
          ),
        // The real egress seam: loopback reachable only where the package's config allows it.
        fetchFor: ({ allowLoopbackHttp }) => createGuardedFetch({ allowLoopbackHttp }),
      };
      const call = { id: at.callId ?? randomUUID(), name, arguments: JSON.stringify(args) };
      const resolved = resolveCall(registry, call);
      if (resolved.kind !== 'ready') return resolved.observation;
      const result = await invoke(
        resolved.definition,
        resolved.args,
        call,
        runtime,
        at.step ?? ++step,
      );
      return result.observation;
    },
    events: () => store.forRun(run.id),
    close: () => db.close(),
  };
  return harness;
}

/**
 * What the catalog offers a direct conversation whose agent has captured exactly `secretKinds`
 * (package id → kinds), with the outbound service and no backends: how a package's tools are
 * withheld for want of a credential.
 */
export function offerWithSecrets(
  secretKinds: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): ReturnType<typeof offerRegistry> {
  const { registry } = loadCatalog(catalog);
  return offerRegistry(registry, {
    audience: 'direct',
    disabledTools: new Set(),
    secretKinds,
    packageAudiences: new Map(),
    backends: { workspace: false, browser: false },
    services: new Set(['mesh.outbound']),
  });
}
