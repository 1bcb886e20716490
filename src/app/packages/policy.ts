import type { JsonValue } from '../../model/json.ts';
import { effectiveConfig, renderPublicSettings } from '../../policy/config-values.ts';
import { offerRegistry, toolKey, type OfferFacts, type Withheld } from '../../policy/offer.ts';
import { agentToolOwnerId } from '../../secrets/secret-input.ts';
import type { Audience } from '../../policy/audience.ts';
import { browserGrantOf } from '../../store/browsers.ts';
import { lifecycleStore } from '../../store/lifecycle.ts';
import { backendGrantOf } from '../../store/workspaces.ts';
import {
  listConfigValues,
  listDisabledTools,
  listPackageAudiences,
} from '../../store/tool-policy.ts';
import { declaredServices, serviceKey } from '../../tool/context.ts';
import { createRegistry, type Registry } from '../../tool/registry.ts';
import { remoteOffer } from '../mcp/offer.ts';
import { unservedWebVerbs } from '../backends/web-service.ts';
import type { Mesh } from '../mesh.ts';

/** What a turn may offer and what its handlers are handed, read once per turn. */
export interface TurnPolicy {
  readonly registry: Registry;
  readonly withheld: readonly Withheld[];
  configFor(packageId: string): Readonly<Record<string, JsonValue>>;
  /** The public settings of the offered packages, for the prompt. */
  readonly publicSettings: string;
}

/** An agent's config values per package, with the manifests' defaults. */
export async function agentConfig(
  mesh: Mesh,
  agentId: string,
): Promise<(packageId: string) => Readonly<Record<string, JsonValue>>> {
  const rows = await listConfigValues(mesh.reads.db, agentId);
  const byPackage = new Map<string, Record<string, JsonValue>>();
  for (const pkg of mesh.catalog.packages) {
    const stored = new Map(
      rows.filter((r) => r.packageId === pkg.manifest.package.id).map((r) => [r.key, r.value]),
    );
    byPackage.set(pkg.manifest.package.id, effectiveConfig(pkg, stored));
  }
  return (packageId) => byPackage.get(packageId) ?? {};
}

/**
 * The built-in tools plus the agent's remote MCP tools (from its own bindings, in scope for the
 * conversation when one is given), and the remote tools left out with their reasons.
 */
export async function agentRegistry(
  mesh: Mesh,
  agentId: string,
  scope: Parameters<typeof remoteOffer>[2] = {},
): Promise<{ registry: Registry; withheld: readonly Withheld[] }> {
  const remote = await remoteOffer(mesh, agentId, scope);
  if (remote.definitions.length === 0)
    return { registry: mesh.catalog.registry, withheld: remote.withheld };
  const builtIn = new Set(mesh.catalog.registry.names());
  const clashing = remote.definitions.filter((d) => builtIn.has(d.tool.name));
  return {
    registry: createRegistry([
      ...mesh.catalog.registry.definitions(),
      ...remote.definitions.filter((d) => !builtIn.has(d.tool.name)),
    ]),
    withheld: [
      ...remote.withheld,
      ...clashing.map((d) => ({ name: d.tool.name, reason: 'its name is a built-in tool’s' })),
    ],
  };
}

/** What offer decisions read about an agent, for any audience. */
export type AgentOfferFacts = Omit<OfferFacts, 'audience'>;

/**
 * Reads an agent's offer facts: per-agent opt-outs, audience limits per package, and needs
 * (secret kinds captured for this agent's installation of each package; a workspace backend
 * and a browser backend granted to the agent; a query provider granted that can serve each web
 * verb).
 */
export async function agentOfferFacts(mesh: Mesh, agentId: string): Promise<AgentOfferFacts> {
  // Issued together: on a server they share one round trip (Mesh.reads).
  const { db, secrets } = mesh.reads;
  const [disabled, audiences, workspaceGrant, browserGrant, unservedWeb, installs, held] =
    await Promise.all([
      listDisabledTools(db, agentId),
      listPackageAudiences(db, agentId),
      backendGrantOf(db, agentId),
      browserGrantOf(db, agentId),
      unservedWebVerbs(db, agentId),
      lifecycleStore(db).listInstalls(agentId),
      // Every installation's captured kinds in one read, not one per package.
      secrets.describeMatching({
        ownerType: 'agent_tool',
        ownerIdPrefix: agentToolOwnerId(agentId, ''),
      }),
    ]);
  const secretKinds = new Map<string, Set<string>>();
  for (const pkg of mesh.catalog.packages) {
    if (!pkg.manifest.config.some((f) => f.disposition === 'secret')) continue;
    const owner = agentToolOwnerId(agentId, pkg.manifest.package.id);
    const kinds = held.filter((m) => m.ownerId === owner).map((m) => m.kind);
    secretKinds.set(pkg.manifest.package.id, new Set(kinds));
  }
  return {
    disabledTools: new Set(disabled.map((t) => toolKey(t.packageId, t.toolName))),
    packageAudiences: audiences,
    secretKinds,
    backends: { workspace: workspaceGrant !== undefined, browser: browserGrant !== undefined },
    services: providedServices(mesh),
    unavailableServices: unservedWeb,
    installStates: new Map(installs.map((i) => [i.packageId, i.state])),
    enableRequired: new Set(
      mesh.catalog.packages
        .filter((p) => p.manifest.hooks.on_enable !== undefined)
        .map((p) => p.manifest.package.id),
    ),
  };
}

/** The services the catalog's tools declare that this Mesh provides. */
function providedServices(mesh: Mesh): Set<string> {
  const provided = new Set<string>();
  for (const d of mesh.catalog.registry.definitions())
    for (const id of declaredServices(d.needs))
      if (mesh.services.has(serviceKey(id))) provided.add(id);
  return provided;
}

/**
 * Computes the turn's policy from the agent's offer facts into `registry.select`, so what is not
 * allowed is never offered.
 */
export async function turnPolicy(
  mesh: Mesh,
  agentId: string,
  audience: Audience,
  conversationId: string | null = null,
): Promise<TurnPolicy> {
  const [facts, configFor, remote] = await Promise.all([
    agentOfferFacts(mesh, agentId),
    agentConfig(mesh, agentId),
    // The sessions of the servers it offers are opened now, while the model is asked.
    agentRegistry(mesh, agentId, { audience, conversationId, warm: true }),
  ]);
  const offered = offerRegistry(remote.registry, { ...facts, audience });
  const registry = offered.registry;
  const withheld = [...offered.withheld, ...remote.withheld];
  const offeredPackages = new Set(registry.definitions().map((d) => d.origin.packageId));
  return {
    registry,
    withheld,
    configFor,
    publicSettings: renderPublicSettings(mesh.catalog.packages, configFor, offeredPackages),
  };
}
