import type { JsonObject, JsonValue } from '../model/json.ts';
import type { Tool, ToolCall } from '../model/wire.ts';
import type { Definition } from '../tool/definition.ts';
import { createRegistry, MESH_OWNED_PACKAGES, type Registry } from '../tool/registry.ts';
import {
  activationsIn,
  definitionFingerprint,
  reactivate,
  withActivations,
  type RefusedActivation,
} from './activations.ts';
import { toolTokens, type InputBudget } from './context-budget.ts';
import { integrationsOf, renderIntegrations } from './integration-summary.ts';
import { LoadedSet } from './loaded-set.ts';
import { buildToolIndex, DEFAULT_SEARCH_LIMIT, type ToolIndex } from './tool-index.ts';
import { searchOutput, TOOL_SEARCH, toolSearchDefinition, toolSearchTool } from './tool-search.ts';
import { TokenCounter } from './token-count.ts';

/** The share of the input budget the loaded tools' schemas may take. */
export const LOADED_SHARE = 0.125;

/**
 * Whether a turn carries every schema or the index, with both sides of the comparison in tokens:
 * `allTokens` is every offered schema; `indexTokens` is the agent's own verbs, tool_search with
 * its summary, and what one search loads (its results at the searchable tools' mean cost, at
 * most the loaded share but at least one tool). The index is used only when it is cheaper.
 */
export interface LoadingDecision {
  readonly index: boolean;
  readonly allTokens: number;
  readonly indexTokens: number;
}

/** How a turn offers its tools, request by request. */
export interface ToolLoading {
  readonly decision: LoadingDecision;
  /** What calls resolve against: the whole authorized registry (with tool_search on the index). */
  readonly registry: Registry;
  /** The tools of the next request that may carry tools. */
  offered(): readonly Tool[];
  /** What that request's step records of loading: the decision, and what changed since the last. */
  requestData(): JsonObject;
  /** Tells the model what a resumed run could not load again, for every request; or undefined. */
  readonly notice: string | undefined;
  /** After a round's calls ran: the loaded tools used are refreshed (and the order saved). */
  used(calls: readonly ToolCall[]): Promise<void>;
}

/** What planning a turn's loading reads. */
export interface LoadingInput {
  /** The turn's registry, already scoped by offer-time policy. */
  readonly registry: Registry;
  readonly budget: InputBudget;
  /** The run's checkpoint as recorded: its activations are requests to load again. */
  readonly checkpoint: JsonObject;
  /** Replaces the run's checkpoint (the engine fences it with the run's lease). */
  save(checkpoint: JsonObject): Promise<void>;
}

/**
 * The agent's own verbs: its memory and its other verbs (the Mesh-owned packages), always
 * offered, never searched. The spec names them — memory, progress, commitments — as what a turn
 * starts with. Everything
 * else, Mesh's own conversation search included, is found through tool_search on the index:
 * a need for it ("what did we decide last week") is a search away, and its schema is not paid
 * for on every request of a turn that never looks back.
 */
export function isOwnVerb(d: Definition): boolean {
  return d.origin.source === 'first_party' && MESH_OWNED_PACKAGES.has(d.origin.packageId);
}

const perTool = new WeakMap<Tool, number>();
async function tokensOf(tool: Tool, counter: TokenCounter): Promise<number> {
  let n = perTool.get(tool);
  if (n === undefined) {
    n = await counter.count(JSON.stringify(tool));
    perTool.set(tool, n);
  }
  return n;
}

/** The searchable part of a registry: everything but the agent's own verbs. */
export function searchableDefinitions(registry: Registry): Definition[] {
  return registry.definitions().filter((d) => !isOwnVerb(d));
}

/** The index tool_search and `mesh tools search` rank with, over a registry's searchable part. */
export function searchIndexOf(registry: Registry): ToolIndex {
  return buildToolIndex(searchableDefinitions(registry));
}

/**
 * Decides how a turn offers its tools and returns the plan. Below the line (or with nothing to
 * search) every schema is offered exactly as without progressive loading, and nothing is stored.
 * On the index, the checkpoint's activations are looked up again in `registry` — the authority
 * the run has now — and what was revoked or redefined is refused and named to the model.
 */
export async function planToolLoading(input: LoadingInput): Promise<ToolLoading> {
  // tool_search is offered only on the index: what policy granted of it is set aside here.
  const searchVerb = input.registry.get(TOOL_SEARCH);
  const registry = searchVerb
    ? input.registry.select((d) => d.tool.name !== TOOL_SEARCH)
    : input.registry;
  const counter = new TokenCounter();
  const searchable = searchableDefinitions(registry);
  const own = registry.definitions().filter(isOwnVerb);
  // Without the verb (an operator opted the agent out of it) there is no index to go on.
  if (!searchVerb) {
    const allTokens = await toolTokens(registry.tools(), counter);
    return carryAll(registry, { allTokens, indexTokens: allTokens, index: false });
  }
  const searchTool = toolSearchTool(
    searchVerb.tool,
    renderIntegrations(integrationsOf(searchable)),
  );
  const inputTokens = Math.max(0, input.budget.contextTokens - input.budget.reservedOutputTokens);
  const capacity = Math.floor(LOADED_SHARE * inputTokens);
  const costs = new Map<string, number>();
  for (const d of searchable) costs.set(d.tool.name, await tokensOf(d.tool, counter));
  const mean = searchable.length === 0 ? 0 : sumOf(costs.values()) / searchable.length;
  // A search loads its matches within the share, but always at least one: a tool larger than
  // the share is kept alone, so it costs what it costs.
  const expectedLoad = Math.min(
    Math.max(capacity, mean),
    mean * Math.min(DEFAULT_SEARCH_LIMIT, searchable.length),
  );
  const decision: LoadingDecision = {
    allTokens: await toolTokens(registry.tools(), counter),
    indexTokens: Math.round(
      (await toolTokens([...own.map((d) => d.tool), searchTool], counter)) + expectedLoad,
    ),
    index: false,
  };
  const indexed = searchable.length > 0 && decision.indexTokens < decision.allTokens;
  if (!indexed) return carryAll(registry, decision);
  return onIndex(
    { ...input, registry },
    { ...decision, index: true },
    { own, searchable, searchVerb, searchTool, costs, capacity },
  );
}

function sumOf(values: Iterable<number>): number {
  let n = 0;
  for (const v of values) n += v;
  return n;
}

function carryAll(registry: Registry, decision: LoadingDecision): ToolLoading {
  return {
    decision,
    registry,
    offered: () => registry.tools(),
    requestData: () => ({ ...decision }),
    notice: undefined,
    used: () => Promise.resolve(),
  };
}

interface IndexParts {
  readonly own: readonly Definition[];
  readonly searchable: readonly Definition[];
  readonly searchVerb: Definition;
  readonly searchTool: Tool;
  readonly costs: ReadonlyMap<string, number>;
  readonly capacity: number;
}

async function onIndex(
  input: LoadingInput,
  decision: LoadingDecision,
  parts: IndexParts,
): Promise<ToolLoading> {
  const { registry } = input;
  const loaded = new LoadedSet(parts.capacity);
  const costOf = (name: string) => parts.costs.get(name) ?? 0;
  const ownNames = new Set(parts.own.map((d) => d.tool.name));
  const searchableNames = new Set(parts.costs.keys());
  const share = `the loaded tools' ${parts.capacity}-token share of the input budget`;

  // Changes since the last request, for its step: loaded (by which search), unloaded and why.
  let events: { loaded: JsonValue[]; unloaded: JsonValue[] } = { loaded: [], unloaded: [] };
  let checkpoint = input.checkpoint;
  const save = async (): Promise<void> => {
    const activations = loaded.names().flatMap((name) => {
      const d = registry.get(name);
      return d ? [{ name, fingerprint: definitionFingerprint(d) }] : [];
    });
    checkpoint = withActivations(checkpoint, activations);
    await input.save(checkpoint);
  };

  // A resumed run asks again for what it had loaded; only what is still granted, unchanged, is.
  const recorded = activationsIn(input.checkpoint);
  const again = reactivate(recorded, registry);
  const refused: RefusedActivation[] = [...again.refused];
  // An own verb is offered anyway, so only searchable tools are loaded again.
  const restored = loaded.load(
    again.kept
      .filter((d) => searchableNames.has(d.tool.name))
      .reverse()
      .map((d) => ({ name: d.tool.name, tokens: costOf(d.tool.name) })),
  );
  for (const name of [...restored.unloaded, ...restored.skipped])
    events.unloaded.push({ name, reason: `not reloaded: it no longer fits ${share}` });
  if (refused.length > 0 || restored.skipped.length > 0) await save();

  let index: ToolIndex | undefined;
  const search = async (query: string) => {
    index ??= buildToolIndex(parts.searchable);
    const matches = index.search(query, DEFAULT_SEARCH_LIMIT);
    const change = loaded.load(matches.map((m) => ({ name: m.name, tokens: costOf(m.name) })));
    for (const name of change.loaded) events.loaded.push({ name, query });
    for (const name of change.unloaded)
      events.unloaded.push({ name, reason: `least recently used, to stay within ${share}` });
    for (const name of change.skipped)
      events.unloaded.push({ name, reason: `found, but the better matches filled ${share}` });
    await save();
    return searchOutput(matches, change);
  };
  const definition = toolSearchDefinition(parts.searchVerb, parts.searchTool, search);
  const execution = createRegistry([...registry.definitions(), definition]);

  return {
    decision,
    registry: execution,
    offered: () => [
      ...parts.own.map((d) => d.tool),
      parts.searchTool,
      ...registry
        .definitions()
        .filter((d) => !ownNames.has(d.tool.name) && loaded.has(d.tool.name))
        .map((d) => d.tool),
    ],
    requestData() {
      const data: JsonObject = {
        ...decision,
        shareTokens: parts.capacity,
        loadedTokens: loaded.tokens,
        loaded: events.loaded,
        unloaded: events.unloaded,
        ...(refused.length > 0 ? { refused: refused.map((r) => ({ ...r })) } : {}),
      };
      events = { loaded: [], unloaded: [] };
      refused.length = 0;
      return data;
    },
    notice:
      again.refused.length === 0
        ? undefined
        : `Tools you had loaded earlier in this task are no longer available and are not offered: ${again.refused
            .map((r) => `${r.name} (${r.reason})`)
            .join('; ')}. Do not call them; search again for what you need.`,
    async used(calls) {
      const before = loaded.names().join('\n');
      for (const call of calls) loaded.touch(call.name);
      if (loaded.names().join('\n') !== before) await save();
    },
  };
}
