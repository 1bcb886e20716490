import type { Audience } from './audience.ts';
import type { Definition } from '../tool/definition.ts';
import type { Registry } from '../tool/registry.ts';

/** What the offer decision reads, gathered once per turn. */
export interface OfferFacts {
  readonly audience: Audience;
  /** Tools this agent opted out of, each as {@link toolKey} of its package and name. */
  readonly disabledTools: ReadonlySet<string>;
  /** Secret kinds captured for this agent, per package (`packageId` → kinds). */
  readonly secretKinds: ReadonlyMap<string, ReadonlySet<string>>;
  /** Packages limited to some audiences for this agent; absent means every audience. */
  readonly packageAudiences: ReadonlyMap<string, readonly Audience[]>;
  /** Whether an execution backend / browser backend is configured for this agent. */
  readonly backends: { readonly workspace: boolean; readonly browser: boolean };
  /** Ids of the services this runtime provides (a tool's `service:<id>` needs). */
  readonly services: ReadonlySet<string>;
  /**
   * Services the runtime provides but not to this agent, with why (a web verb's service when no
   * granted provider can serve it). Absent: every provided service serves the agent.
   */
  readonly unavailableServices?: ReadonlyMap<string, string>;
  /** The agent's install state of each package that has an install (absent: none has). */
  readonly installStates?: ReadonlyMap<string, string>;
  /** Packages offered only once an install of them is `enabled` (they have an `on_enable` hook). */
  readonly enableRequired?: ReadonlySet<string>;
}

/**
 * How an opt-out names a tool: its package's id and its name, so an opt-out of one package's
 * tool never applies to another package's tool of the same name.
 */
export function toolKey(packageId: string, toolName: string): string {
  return `${packageId}\u0000${toolName}`;
}

/** A tool that was not offered, and the short reason an operator reads in the run. */
export interface Withheld {
  readonly name: string;
  readonly reason: string;
}

/** Why a definition may not be offered under these facts, or undefined when it may. */
export function withholdReason(d: Definition, facts: OfferFacts): string | undefined {
  const install = facts.installStates?.get(d.origin.packageId);
  if (install !== undefined && install !== 'enabled')
    return `package ${d.origin.packageId} is ${install === 'error' ? 'in error' : install} for this agent`;
  if (install === undefined && facts.enableRequired?.has(d.origin.packageId))
    return `package ${d.origin.packageId} is not enabled for this agent`;
  if (facts.disabledTools.has(toolKey(d.origin.packageId, d.tool.name)))
    return 'disabled for this agent';
  const audiences = facts.packageAudiences.get(d.origin.packageId);
  if (audiences && !audiences.includes(facts.audience))
    return `not offered in ${facts.audience} conversations`;
  for (const need of d.needs) {
    if (need === 'workspace' && !facts.backends.workspace)
      return 'needs a workspace backend; none is configured';
    if (need === 'browser' && !facts.backends.browser)
      return 'needs a browser backend; none is configured';
    if (need.startsWith('secret:')) {
      const kind = need.slice('secret:'.length);
      if (!facts.secretKinds.get(d.origin.packageId)?.has(kind))
        return `needs secret ${kind}, not captured for this agent`;
    }
    if (need.startsWith('service:')) {
      const id = need.slice('service:'.length);
      if (!facts.services.has(id)) return `needs service ${id}; this runtime does not provide it`;
      const unavailable = facts.unavailableServices?.get(id);
      if (unavailable !== undefined) return unavailable;
    }
  }
  return undefined;
}

/**
 * Offer-time gating: the registry a turn may show and execute, computed with `select`, so a
 * forbidden tool is absent from the model request rather than refused at call time. Every tool
 * left out comes with a reason, so "what could this run have reached" stays a query.
 */
export function offerRegistry(
  registry: Registry,
  facts: OfferFacts,
): { registry: Registry; withheld: Withheld[] } {
  const withheld: Withheld[] = [];
  const selected = registry.select((d) => {
    const reason = withholdReason(d, facts);
    if (reason !== undefined) withheld.push({ name: d.tool.name, reason });
    return reason === undefined;
  });
  return { registry: selected, withheld };
}
