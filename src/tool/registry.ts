import type { Tool } from '../model/wire.ts';
import { isNeed, REPLAYS, TOOL_CLASSES, type Definition, type Origin } from './definition.ts';
import { MeshError } from './errors.ts';
import { prepareDecoder } from './decode-arguments.ts';

/** Names every model provider accepts for a tool. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Packages that may declare `internal` replay: Mesh-owned verbs that write only to Mesh's own
 * database. Being first-party is not enough (a GitHub package acts on the world). `mesh.agent`
 * (tools/agent/) declares the agent's other own verbs: tool_search, request_input,
 * browser_handoff and progress.
 */
export const MESH_OWNED_PACKAGES: ReadonlySet<string> = Object.freeze(
  new Set(['mesh.memory', 'mesh.agent']),
);

/** An immutable set of definitions: the model's schemas and the executor's lookup in one value. */
export interface Registry {
  /** The provider-visible tools, in registration order. */
  tools(): readonly Tool[];
  /** The definition the executor invokes for a name, or undefined when it is not in this registry. */
  get(name: string): Definition | undefined;
  names(): readonly string[];
  definitions(): readonly Definition[];
  readonly size: number;
  /** A reduced registry holding only the definitions the predicate keeps. */
  select(predicate: (definition: Definition) => boolean): Registry;
}

/** One reason a definition was refused, naming the tool and where it came from. */
export interface RegistryProblem {
  readonly tool: string;
  readonly origin: string;
  readonly message: string;
}

/** The registry refused some definitions; `problems` lists every one of them. */
export class RegistryError extends MeshError {
  static readonly code = 'invalid_definition';
  readonly problems: readonly RegistryProblem[];
  constructor(problems: readonly RegistryProblem[]) {
    super(
      RegistryError.code,
      problems.map((p) => `tool ${JSON.stringify(p.tool)} (${p.origin}): ${p.message}`).join('\n'),
      { problems: problems.map((p) => ({ tool: p.tool, origin: p.origin, message: p.message })) },
    );
    this.problems = problems;
  }
}

export interface RegistryOptions {
  /** Packages allowed to declare `internal` replay; defaults to {@link MESH_OWNED_PACKAGES}. */
  readonly meshOwnedPackages?: ReadonlySet<string>;
}

/** `id@version` plus where it came from, for diagnostics. */
export function describeOrigin(origin: Origin): string {
  return `${origin.packageId}@${origin.version} (${origin.source})`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function check(definition: Definition, owned: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const { tool } = definition;
  if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
    problems.push('name must match ^[a-zA-Z0-9_-]{1,64}$ (what model providers accept)');
  }
  if (typeof tool.description !== 'string') problems.push('description must be a string');
  if (!TOOL_CLASSES.includes(definition.class))
    problems.push(`class must be one of ${TOOL_CLASSES.join(', ')}`);
  if (!REPLAYS.includes(definition.replay))
    problems.push(`replay must be one of ${REPLAYS.join(', ')}`);
  for (const need of definition.needs) {
    if (!isNeed(need))
      problems.push(`need ${JSON.stringify(need)} is not workspace, browser or secret:<kind>`);
  }
  if (
    definition.replay === 'internal' &&
    !(definition.origin.source === 'first_party' && owned.has(definition.origin.packageId))
  ) {
    problems.push(
      'internal replay is reserved for Mesh-owned packages that write only to Mesh’s own database',
    );
  }
  const parameters: unknown = tool.parameters;
  if (parameters === undefined || parameters === null) {
    problems.push('parameters are absent; every tool needs a JSON object schema');
  } else if (!isPlainObject(parameters) || parameters['type'] !== 'object') {
    problems.push('parameters must be a JSON Schema whose top level is {"type": "object"}');
  } else {
    const strictness = definition.origin.source === 'first_party' ? 'strict' : 'lenient';
    try {
      prepareDecoder(tool.parameters, strictness);
    } catch (error) {
      problems.push(`parameters schema ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (definition.outputSchema !== undefined) {
    const strictness = definition.origin.source === 'first_party' ? 'strict' : 'lenient';
    try {
      prepareDecoder(definition.outputSchema, strictness);
    } catch (error) {
      problems.push(`output schema ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (typeof definition.execute !== 'function') problems.push('has no handler');
  return problems;
}

function build(definitions: readonly Definition[]): Registry {
  const byName = new Map<string, Definition>();
  for (const d of definitions) byName.set(d.tool.name, d);
  const list = Object.freeze([...definitions]);
  const tools = Object.freeze(list.map((d) => d.tool));
  const names = Object.freeze(list.map((d) => d.tool.name));
  const registry: Registry = {
    tools: () => tools,
    get: (name) => byName.get(name),
    names: () => names,
    definitions: () => list,
    size: list.length,
    select: (predicate) => build(list.filter((d) => predicate(d))),
  };
  return Object.freeze(registry);
}

/**
 * Definitions checked under Mesh's own packages, each with its frozen copy (a copy is its own): a
 * turn's registry is the catalog's definitions and the agent's remote ones, so a definition is
 * checked and copied once, not once a turn.
 */
const CHECKED = new WeakMap<Definition, Definition>();

/**
 * Builds the registry once from definitions. Refuses, listing every problem: duplicate names
 * (naming both origins), names providers refuse, parameters that are absent or not an object
 * schema, schemas that are not valid JSON Schema 2020-12, and `internal` replay outside Mesh's own
 * packages. The result and every definition in it are frozen.
 */
export function createRegistry(
  definitions: readonly Definition[],
  options: RegistryOptions = {},
): Registry {
  const owned = options.meshOwnedPackages ?? MESH_OWNED_PACKAGES;
  const checked = options.meshOwnedPackages === undefined ? CHECKED : undefined;
  const problems: RegistryProblem[] = [];
  const seen = new Map<string, Definition>();
  for (const definition of definitions) {
    const name = String(definition.tool?.name);
    const origin = describeOrigin(definition.origin);
    const first = seen.get(name);
    if (first) {
      problems.push({
        tool: name,
        origin,
        message: `duplicate name: already declared by ${describeOrigin(first.origin)}`,
      });
      continue;
    }
    seen.set(name, definition);
    if (checked !== undefined && checked.has(definition)) continue;
    for (const message of check(definition, owned)) problems.push({ tool: name, origin, message });
  }
  if (problems.length > 0) throw new RegistryError(problems);
  return build(
    definitions.map((d) => {
      const known = checked?.get(d);
      if (known !== undefined) return known;
      const copy = deepFreeze({ ...d, needs: [...d.needs] });
      checked?.set(d, copy).set(copy, copy);
      return copy;
    }),
  );
}
