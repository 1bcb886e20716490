import type { JsonSchema } from '../model/json.ts';
import { resolveJsonPointer } from './json-pointer.ts';

/**
 * What an untrusted schema may cost before Mesh compiles it. A remote server writes its tools'
 * schemas, so it also chooses what checking an argument against them costs: 39 `$defs`, each an
 * `anyOf` of a `$ref` to the one before and an `allOf` of the same `$ref`, make a validator visit
 * 2^39 subschemas for every value (and, collecting all errors, keep one error object per visit).
 * Measuring first keeps that cost a constant Mesh chose (decision 0042).
 */
export const SCHEMA_LIMITS = Object.freeze({
  /** The schema as JSON text. */
  maxBytes: 256 * 1024,
  /** Subschemas written in the document. */
  maxNodes: 10_000,
  /** How deep subschemas nest in the document. */
  maxDepth: 48,
  /** Branches of one `allOf`, `anyOf` or `oneOf`, and entries of one `properties`. */
  maxBranches: 256,
  /**
   * Subschemas one value can be checked against with every `$ref` expanded: the work of a check
   * per value it looks at. A recursive `$ref` counts once; recursion is paid for by the value's
   * own size, which the argument limits bound.
   */
  maxExpansion: 4_096,
});

export type SchemaLimits = typeof SCHEMA_LIMITS;

/** What a schema measured: the figures its limits are compared with. */
export interface SchemaMeasure {
  readonly bytes: number;
  readonly nodes: number;
  readonly depth: number;
  readonly expansion: number;
}

/** A measured schema, or why it is refused (naming the limit and where, never a value). */
export type SchemaCost = { readonly measure: SchemaMeasure } | { readonly refused: string };

/** Keywords whose subschema checks the same value. */
const SAME_VALUE_ONE = ['not', 'if', 'then', 'else'] as const;
const SAME_VALUE_MANY = ['allOf', 'anyOf', 'oneOf'] as const;
const SAME_VALUE_MAP = ['dependentSchemas', 'dependencies'] as const;
/** Keywords whose subschema checks values inside this one, with the step it takes. */
const INTO_ONE: ReadonlyArray<readonly [string, string]> = [
  ['additionalProperties', 'property:*'],
  ['unevaluatedProperties', 'property:*'],
  ['propertyNames', 'name'],
  ['additionalItems', 'item:*'],
  ['unevaluatedItems', 'item:*'],
  ['contains', 'item:*'],
];
const INTO_MAP: ReadonlyArray<readonly [string, string]> = [
  ['properties', 'property:'],
  ['patternProperties', 'property:*'],
];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two steps into a value can reach the same value (`*` reaches every name or index). */
function overlaps(a: string, b: string): boolean {
  if (a === b) return true;
  const [kindA] = a.split(':');
  const [kindB] = b.split(':');
  return kindA === kindB && (a.endsWith(':*') || b.endsWith(':*'));
}

class Refusal extends Error {}

/**
 * Measures a schema before it is compiled: its size, how deep it nests, how many branches a
 * combinator has, and how many subschemas one value is checked against with every `$ref`
 * expanded. A `$ref` must point inside the document (a JSON pointer or an `$anchor`); a cycle of
 * `$ref`s must step into the value (else it never ends), and every way a recursive subschema
 * reaches itself must take a different first step (else a value is checked once per path to it,
 * exponentially many). Linear in the document: each subschema's expansion is counted once.
 */
export function measureSchema(root: JsonSchema, limits: SchemaLimits = SCHEMA_LIMITS): SchemaCost {
  const bytes = Buffer.byteLength(JSON.stringify(root));
  if (bytes > limits.maxBytes)
    return { refused: `is ${bytes} bytes; untrusted schemas are read up to ${limits.maxBytes}` };
  try {
    const written = countNodes(root, limits);
    const expansion = new Expansion(root, limits).total();
    return { measure: { bytes, nodes: written.nodes, depth: written.depth, expansion } };
  } catch (error) {
    if (error instanceof Refusal) return { refused: error.message };
    throw error;
  }
}

/** Every subschema of a node, with the step into the value it takes (undefined: the same value). */
function subschemas(node: Record<string, unknown>, limits: SchemaLimits): [unknown, string?][] {
  const out: [unknown, string?][] = [];
  for (const key of SAME_VALUE_ONE) if (key in node) out.push([node[key]]);
  for (const key of SAME_VALUE_MANY) {
    const list = node[key];
    if (!Array.isArray(list)) continue;
    if (list.length > limits.maxBranches)
      throw new Refusal(
        `has an ${key} of ${list.length} branches; untrusted schemas may have ${limits.maxBranches}`,
      );
    for (const s of list) out.push([s]);
  }
  for (const key of SAME_VALUE_MAP) {
    const map = node[key];
    if (isObject(map)) for (const s of Object.values(map)) if (isObject(s)) out.push([s]);
  }
  for (const [key, step] of INTO_ONE) if (key in node) out.push([node[key], step]);
  const items = node['items'];
  const prefix = Array.isArray(items) ? items : node['prefixItems'];
  if (Array.isArray(prefix)) prefix.forEach((s, i) => out.push([s, `item:${i}`]));
  if (items !== undefined && !Array.isArray(items)) out.push([items, 'item:*']);
  for (const [key, step] of INTO_MAP) {
    const map = node[key];
    if (!isObject(map)) continue;
    const entries = Object.entries(map);
    if (entries.length > limits.maxBranches)
      throw new Refusal(
        `has ${key} of ${entries.length} entries; untrusted schemas may have ${limits.maxBranches}`,
      );
    for (const [name, s] of entries) out.push([s, step.endsWith(':') ? step + name : step]);
  }
  return out;
}

/** How many subschemas the document writes (definitions included) and how deep they nest. */
function countNodes(root: unknown, limits: SchemaLimits): { nodes: number; depth: number } {
  let nodes = 0;
  let deepest = 0;
  const visit = (node: unknown, depth: number): void => {
    nodes += 1;
    if (nodes > limits.maxNodes)
      throw new Refusal(
        `has over ${limits.maxNodes} subschemas; untrusted schemas may have that many`,
      );
    if (depth > limits.maxDepth)
      throw new Refusal(
        `nests deeper than ${limits.maxDepth}; untrusted schemas may nest that deep`,
      );
    deepest = Math.max(deepest, depth);
    if (!isObject(node)) return;
    for (const [child] of subschemas(node, limits)) visit(child, depth + 1);
    for (const key of ['$defs', 'definitions']) {
      const defs = node[key];
      if (isObject(defs)) for (const d of Object.values(defs)) visit(d, depth + 1);
    }
  };
  visit(root, 0);
  return { nodes, depth: deepest };
}

/** The expansion count of a document, with its `$ref` cycles checked as they are found. */
class Expansion {
  private readonly done = new Map<unknown, number>();
  /** Ref targets being expanded, with where in {@link path} each began. */
  private readonly active = new Map<unknown, number>();
  /** The steps into the value taken from the root to where the walk is (undefined: none). */
  private readonly path: (string | undefined)[] = [];
  /** For each recursive target, the first step of every way it reaches itself. */
  private readonly returns = new Map<unknown, string[]>();
  private anchors: Map<string, unknown> | undefined;
  /**
   * The lowest {@link path} depth at which a recursion met by the walk began: a subschema whose
   * count included a return to a target still open above it is counted again where it recurs,
   * since its returns are new paths there (memoizing it would hide them).
   */
  private touched = Infinity;

  constructor(
    private readonly root: JsonSchema,
    private readonly limits: SchemaLimits,
  ) {}

  total(): number {
    return this.cost(this.root);
  }

  private cost(node: unknown): number {
    if (!isObject(node)) return 1;
    const known = this.done.get(node);
    if (known !== undefined) return known;
    const entry = this.path.length;
    const outer = this.touched;
    this.touched = Infinity;
    let total = 1;
    for (const key of ['$dynamicRef', '$recursiveRef'])
      if (key in node)
        throw new Refusal(`uses ${key}, which Mesh does not read in untrusted schemas`);
    const ref = node['$ref'];
    if (typeof ref === 'string') total += this.refCost(ref);
    for (const [child, step] of subschemas(node, this.limits)) {
      this.path.push(step);
      try {
        total += this.cost(child);
      } finally {
        this.path.pop();
      }
      if (total > this.limits.maxExpansion) throw this.tooCostly();
    }
    if (this.touched >= entry) this.done.set(node, total);
    this.touched = Math.min(outer, this.touched);
    return total;
  }

  private refCost(ref: string): number {
    const target = this.resolve(ref);
    const began = this.active.get(target);
    if (began !== undefined) {
      // A recursion: paid for by the value's size, provided it moves into the value each time
      // and every way back starts with a different step.
      this.touched = Math.min(this.touched, began);
      const steps = this.path.slice(began).filter((s): s is string => s !== undefined);
      const first = steps[0];
      if (first === undefined)
        throw new Refusal(`has a $ref cycle through ${ref} that never moves into the value`);
      const seen = this.returns.get(target) ?? [];
      if (seen.some((s) => overlaps(s, first)))
        throw new Refusal(
          `reaches ${ref} again by more than one path to the same value, which costs exponentially`,
        );
      this.returns.set(target, [...seen, first]);
      return 1;
    }
    this.active.set(target, this.path.length);
    try {
      return this.cost(target);
    } finally {
      this.active.delete(target);
    }
  }

  private resolve(ref: string): unknown {
    const target =
      ref.startsWith('#/') || ref === '#' ? resolveJsonPointer(this.root, ref) : this.anchor(ref);
    if (target === undefined)
      throw new Refusal(
        `has a $ref (${JSON.stringify(ref.slice(0, 80))}) that does not point inside the schema`,
      );
    return target;
  }

  private anchor(ref: string): unknown {
    if (!ref.startsWith('#')) return undefined;
    if (!this.anchors) {
      const found = new Map<string, unknown>();
      const visit = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(visit);
        if (!isObject(node)) return;
        if (typeof node['$anchor'] === 'string') found.set(node['$anchor'], node);
        Object.values(node).forEach(visit);
      };
      visit(this.root);
      this.anchors = found;
    }
    return this.anchors.get(ref.slice(1));
  }

  private tooCostly(): Refusal {
    return new Refusal(
      `expands to over ${this.limits.maxExpansion} subschemas per value checked ($refs expanded); ` +
        'untrusted schemas may expand to that many',
    );
  }
}
