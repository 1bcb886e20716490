import { resolveJsonPointer } from './json-pointer.ts';
import type { JsonSchema } from '../model/json.ts';

/** The JSON kinds a model can send, as named in refusal messages. */
export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

/**
 * The structural part of a schema that `decodeArguments` checks itself, to give a model precise
 * messages: which fields are accepted, which are required, and which JSON kind each must be.
 * Everything else (enum, pattern, bounds, formats, combinators) is left to the full validator.
 */
export interface ArgumentShape {
  /** Allowed kinds, or undefined when the schema does not constrain the kind. */
  types: ReadonlySet<JsonKind> | undefined;
  /** `types` as {@link KIND_BITS} (a number admits an integer too); 0 when unconstrained. */
  kindMask: number;
  /** Declared fields at this level (own, from allOf, and from anyOf/oneOf branches). */
  properties: Map<string, ArgumentShape>;
  /** True when properties are declared and nothing explicitly allows others. */
  closed: boolean;
  /** Set once anything at this level allows undeclared fields; later declarations cannot close it. */
  explicitlyOpen: boolean;
  required: string[];
  items: ArgumentShape | undefined;
  prefixItems: ArgumentShape[];
}

/** One bit per JSON kind, so a value's kind is checked against a shape with one `&`. */
export const KIND_BITS: Readonly<Record<JsonKind, number>> = Object.freeze({
  object: 1,
  array: 2,
  string: 4,
  number: 8,
  integer: 16,
  boolean: 32,
  null: 64,
});

function maskOf(types: ReadonlySet<JsonKind>): number {
  let mask = 0;
  for (const t of types) mask |= KIND_BITS[t];
  return types.has('number') ? mask | KIND_BITS.integer : mask;
}

const KINDS = new Set<string>([
  'object',
  'array',
  'string',
  'number',
  'integer',
  'boolean',
  'null',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An always-open shape for subschemas the decoder does not interpret (remote $refs, booleans). */
function openShape(): ArgumentShape {
  return {
    types: undefined,
    kindMask: 0,
    properties: new Map(),
    closed: false,
    explicitlyOpen: false,
    required: [],
    items: undefined,
    prefixItems: [],
  };
}

export interface ShapeOptions {
  /**
   * Whether declaring properties closes an object to others even without
   * `additionalProperties: false`. First-party schemas are read so (an undeclared field is a
   * typo the model should hear about); remote schemas are read as JSON Schema says: open unless
   * they close themselves.
   */
  readonly closeDeclared?: boolean;
}

/** Compiles the structural shape of a schema; cycles through `$ref` are shared, not unrolled. */
export function compileShape(root: JsonSchema, options: ShapeOptions = {}): ArgumentShape {
  const closeDeclared = options.closeDeclared ?? true;
  const cache = new Map<unknown, ArgumentShape>();

  function shapeOf(node: unknown): ArgumentShape {
    if (!isObject(node)) return openShape();
    const cached = cache.get(node);
    if (cached) return cached;
    const shape = openShape();
    cache.set(node, shape);
    fill(shape, node, false, new Set());
    return shape;
  }

  /** Adds what `node` declares to `shape`; `asBranch` marks an anyOf/oneOf alternative. */
  function fill(
    shape: ArgumentShape,
    node: Record<string, unknown>,
    asBranch: boolean,
    seen: Set<unknown>,
  ): void {
    if (seen.has(node)) return;
    seen.add(node);
    if (typeof node['$ref'] === 'string') {
      const target = resolveJsonPointer(root, node['$ref']);
      if (isObject(target)) fill(shape, target, asBranch, seen);
      else shape.explicitlyOpen = true;
    }
    if (!asBranch) {
      const type = node['type'];
      const list = typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined;
      if (list && list.every((t) => typeof t === 'string' && KINDS.has(t))) {
        const next = new Set(list as JsonKind[]);
        shape.types = shape.types ? new Set([...shape.types].filter((t) => next.has(t))) : next;
        shape.kindMask = maskOf(shape.types);
      }
      if (Array.isArray(node['required'])) {
        for (const name of node['required'])
          if (typeof name === 'string') shape.required.push(name);
      }
      if (isObject(node['items'])) shape.items = shapeOf(node['items']);
      if (Array.isArray(node['prefixItems'])) shape.prefixItems = node['prefixItems'].map(shapeOf);
    }

    const properties = node['properties'];
    const additional = node['additionalProperties'];
    const unevaluated = node['unevaluatedProperties'];
    const allowsOthers =
      (additional !== undefined && additional !== false) ||
      (unevaluated !== undefined && unevaluated !== false) ||
      isObject(node['patternProperties']);
    if (isObject(properties)) {
      for (const [name, sub] of Object.entries(properties)) {
        if (!shape.properties.has(name)) shape.properties.set(name, shapeOf(sub));
      }
      const closes = closeDeclared || additional === false || unevaluated === false;
      if (closes && !allowsOthers && !shape.explicitlyOpen) shape.closed = true;
    }
    if (allowsOthers) shape.explicitlyOpen = true;
    if (shape.explicitlyOpen) shape.closed = false;

    if (Array.isArray(node['allOf'])) {
      for (const sub of node['allOf']) if (isObject(sub)) fill(shape, sub, asBranch, seen);
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = node[key];
      if (!Array.isArray(branches)) continue;
      for (const sub of branches) if (isObject(sub)) fill(shape, sub, true, seen);
    }
  }

  return shapeOf(root);
}

/** Keywords that only describe or bound a value, never which fields or kinds it may hold. */
const LEAF_KEYWORDS = new Set([
  'type',
  'description',
  'title',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
  'enum',
  'const',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
]);

/**
 * Whether the full validator's acceptance alone proves what the shape walk checks, so a valid call
 * skips the walk (which then only explains a refusal). True for plain schemas: every node names
 * its kinds; every object node closes itself (`additionalProperties: false`, which is also what a
 * strict schema's declared properties imply); every array node types its items; no `$ref` or
 * combinator; nested less deep than `maxDepth`. Ajv then refuses each unknown field, wrong kind and
 * missing field the walk would, and an accepted value is no deeper than the schema.
 */
export function validatorSuffices(schema: unknown, maxDepth: number, depth = 0): boolean {
  if (!isObject(schema) || depth >= maxDepth) return false;
  const type = schema['type'];
  const kinds = typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined;
  if (!kinds || kinds.length === 0 || !kinds.every((k) => typeof k === 'string' && KINDS.has(k)))
    return false;
  for (const key of Object.keys(schema)) {
    if (LEAF_KEYWORDS.has(key)) continue;
    if (key === '$schema' && depth === 0) continue;
    if (key === 'properties' || key === 'required' || key === 'additionalProperties') continue;
    if (key === 'items') continue;
    return false;
  }
  const properties = schema['properties'];
  if (kinds.includes('object') || properties !== undefined) {
    if (schema['additionalProperties'] !== false) return false;
    if (properties !== undefined && !isObject(properties)) return false;
    for (const sub of Object.values(properties ?? {}))
      if (!validatorSuffices(sub, maxDepth, depth + 1)) return false;
  } else if (schema['additionalProperties'] !== undefined) return false;
  if (kinds.includes('array') || schema['items'] !== undefined) {
    if (!validatorSuffices(schema['items'], maxDepth, depth + 1)) return false;
  }
  return true;
}
