import type { JsonObject, JsonSchema } from '../model/json.ts';
import {
  compileShape,
  KIND_BITS,
  validatorSuffices,
  type ArgumentShape,
  type JsonKind,
} from './argument-shape.ts';
import { InvalidToolInputError } from './errors.ts';
import {
  compileSchema,
  type CompiledSchema,
  type ErrorObject,
  type SchemaStrictness,
} from './schema-compiler.ts';

/** Limits that keep a hostile argument string from costing more than a refusal. */
export const ARGUMENT_LIMITS = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  maxProblems: 8,
});

/** A schema prepared for decoding: its structural shape plus the full validator. */
export interface ArgumentDecoder {
  readonly shape: ArgumentShape;
  readonly compiled: CompiledSchema;
  /** Whether the validator's acceptance alone proves the shape ({@link validatorSuffices}). */
  readonly validatorSuffices: boolean;
}

const decoders = new WeakMap<JsonSchema, ArgumentDecoder>();

/**
 * Prepares (and caches by schema identity) the decoder for a schema. The registry calls this when
 * it is built so that an invalid schema fails there, not at call time.
 */
export function prepareDecoder(
  schema: JsonSchema,
  strictness: SchemaStrictness = 'strict',
): ArgumentDecoder {
  let decoder = decoders.get(schema);
  if (!decoder) {
    // Compiled first: an untrusted schema is measured there before anything walks it.
    const compiled = compileSchema(schema, strictness);
    decoder = Object.freeze({
      shape: compileShape(schema, { closeDeclared: strictness === 'strict' }),
      compiled,
      validatorSuffices: validatorSuffices(schema, ARGUMENT_LIMITS.maxDepth),
    });
    decoders.set(schema, decoder);
  }
  return decoder;
}

/**
 * Decodes the raw JSON text a model sent as a tool's arguments. Requires exactly one top-level
 * JSON object (a bare null would otherwise run the tool on its defaults); refuses unknown fields
 * wherever the schema declares properties and does not explicitly allow others, wrong kinds,
 * missing required fields, anything after the object, and whatever else the schema forbids.
 *
 * Every refusal is an {@link InvalidToolInputError} whose message is written for the model and
 * names fields, never argument values.
 */
export function decodeArguments(raw: string, schema: JsonSchema): JsonObject {
  const decoder = prepareDecoder(schema);
  const value = parseTopLevelObject(raw);
  // A plain schema's validator proves everything the walk checks: a valid call skips the walk,
  // which then runs only to explain a refusal in its own words (bench:executor).
  if (decoder.validatorSuffices && decoder.compiled.validate(value).length === 0) return value;
  const problems: string[] = [];
  checkShape(value, decoder.shape, [], problems, 0);
  if (problems.length === 0) {
    for (const error of decoder.compiled.validate(value)) {
      const problem = describeAjvError(error);
      if (problem !== undefined && !problems.includes(problem)) problems.push(problem);
      if (problems.length >= ARGUMENT_LIMITS.maxProblems) break;
    }
  }
  if (problems.length > 0) throw refusal(problems);
  return value;
}

function refusal(problems: readonly string[]): InvalidToolInputError {
  const list = problems.slice(0, ARGUMENT_LIMITS.maxProblems);
  const body = list.length === 1 ? list[0] : list.map((p) => `- ${p}`).join('\n');
  return new InvalidToolInputError(
    `The arguments were refused:${list.length === 1 ? ' ' : '\n'}${body}\nFix them and call the tool again.`,
    {
      problems: list,
    },
  );
}

function parseTopLevelObject(raw: string): JsonObject {
  if (typeof raw !== 'string') {
    throw refusal(['arguments must be JSON text holding one object']);
  }
  if (raw.length > ARGUMENT_LIMITS.maxBytes) {
    throw refusal([`arguments exceed ${ARGUMENT_LIMITS.maxBytes} bytes`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // Only a failed parse looks for why: blank text parses to nothing, so it is caught here.
    if (raw.trim() === '') {
      throw refusal([
        'arguments are empty; send a JSON object such as {} when the tool needs none',
      ]);
    }
    const end = endOfLeadingObject(raw);
    if (end !== -1 && isParsable(raw.slice(0, end))) {
      throw refusal([
        `unexpected content after the arguments object (at character ${end}); send exactly one JSON object`,
      ]);
    }
    throw refusal(['arguments are not valid JSON; send exactly one JSON object']);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refusal([`arguments must be a JSON object, not ${article(kindOf(value))}`]);
  }
  return value as JsonObject;
}

function isParsable(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Index just past the first balanced top-level `{…}` in `raw`, or -1 when there is none. */
function endOfLeadingObject(raw: string): number {
  let i = 0;
  while (i < raw.length && /\s/.test(raw[i] ?? '')) i++;
  if (raw[i] !== '{') return -1;
  let depth = 0;
  let inString = false;
  for (; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function kindOf(value: unknown): JsonKind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    default:
      return 'object';
  }
}

/** The {@link KIND_BITS} bit of a parsed value's kind. */
function kindBit(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return KIND_BITS.string;
    case 'number':
      return Number.isInteger(value) ? KIND_BITS.integer : KIND_BITS.number;
    case 'boolean':
      return KIND_BITS.boolean;
    default:
      return value === null
        ? KIND_BITS.null
        : Array.isArray(value)
          ? KIND_BITS.array
          : KIND_BITS.object;
  }
}

function article(kind: string): string {
  if (kind === 'null') return 'null';
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

function describeKinds(types: ReadonlySet<JsonKind>): string {
  return [...types].map(article).join(' or ');
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Renders a path of field names and indexes; names longer than 64 characters are cut. */
function renderPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const name = segment.length > 64 ? `${segment.slice(0, 61)}...` : segment;
      out += IDENTIFIER.test(name) ? (out === '' ? name : `.${name}`) : `[${JSON.stringify(name)}]`;
    }
  }
  return out;
}

function field(path: readonly (string | number)[]): string {
  return path.length === 0 ? 'the arguments object' : `field \`${renderPath(path)}\``;
}

function acceptedFields(shape: ArgumentShape): string {
  const names = [...shape.properties.keys()];
  return names.length === 0 ? 'none' : names.join(', ');
}

/**
 * A scalar (or null) of an allowed kind, within the depth limit: all {@link checkShape} would
 * find for it is nothing, so the walk skips the call and the path bookkeeping.
 */
function leafFits(value: unknown, shape: ArgumentShape, depth: number): boolean {
  if (typeof value === 'object' && value !== null) return false;
  if (depth > ARGUMENT_LIMITS.maxDepth) return false;
  return shape.kindMask === 0 || (kindBit(value) & shape.kindMask) !== 0;
}

function checkShape(
  value: unknown,
  shape: ArgumentShape,
  path: (string | number)[],
  problems: string[],
  depth: number,
): void {
  if (problems.length >= ARGUMENT_LIMITS.maxProblems) return;
  if (depth > ARGUMENT_LIMITS.maxDepth) {
    problems.push(`${field(path)} nests deeper than ${ARGUMENT_LIMITS.maxDepth} levels`);
    return;
  }
  if (shape.types && (kindBit(value) & shape.kindMask) === 0) {
    problems.push(
      `${field(path)} must be ${describeKinds(shape.types)}, not ${article(kindOf(value))}`,
    );
    return;
  }
  // Plain loops over the parsed value: this walk is on every call's path (bench:executor).
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const itemShape = shape.prefixItems[index] ?? shape.items;
      if (itemShape) {
        if (leafFits(item, itemShape, depth + 1)) continue;
        path.push(index);
        checkShape(item, itemShape, path, problems, depth + 1);
        path.pop();
      } else if (typeof item === 'object' && item !== null) {
        checkDepth(item, path, problems, depth + 1);
      }
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const object = value as Record<string, unknown>;
  for (const name of shape.required) {
    if (!Object.hasOwn(object, name)) {
      path.push(name);
      problems.push(`missing required ${field(path)}`);
      path.pop();
    }
  }
  // JSON.parse makes plain objects: `for…in` sees exactly their own keys, with no array built.
  for (const name in object) {
    const child = object[name];
    const childShape = shape.properties.get(name);
    if (childShape && leafFits(child, childShape, depth + 1)) continue;
    path.push(name);
    if (childShape) checkShape(child, childShape, path, problems, depth + 1);
    else if (shape.closed) {
      const where = path.length === 1 ? '' : ` at \`${renderPath(path.slice(0, -1))}\``;
      problems.push(
        `unknown ${field(path)}; the accepted fields${where} are: ${acceptedFields(shape)}`,
      );
    } else if (typeof child === 'object' && child !== null) {
      checkDepth(child, path, problems, depth + 1);
    }
    path.pop();
    if (problems.length >= ARGUMENT_LIMITS.maxProblems) return;
  }
}

/** Walks a value the schema does not describe, only to bound its depth. */
function checkDepth(
  value: object,
  path: (string | number)[],
  problems: string[],
  depth: number,
): void {
  if (depth > ARGUMENT_LIMITS.maxDepth) {
    problems.push(`${field(path)} nests deeper than ${ARGUMENT_LIMITS.maxDepth} levels`);
    return;
  }
  for (const child of Object.values(value) as unknown[]) {
    if (typeof child === 'object' && child !== null) {
      checkDepth(child, path, problems, depth + 1);
      if (problems.length > 0) return;
    }
  }
}

function pathOf(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

/**
 * Turns an ajv error into a sentence for the model. Only the instance path (field names), the
 * keyword and schema parameters are used; ajv is not run in verbose mode, so no data is attached.
 * Errors inside the alternatives of an anyOf/oneOf are summarised by that keyword's own error.
 */
function describeAjvError(error: ErrorObject): string | undefined {
  if (/\/(anyOf|oneOf)\/\d+\//.test(error.schemaPath)) return undefined;
  const path = pathOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `missing required ${field([...path, String(params['missingProperty'])])}`;
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = String(params['additionalProperty'] ?? params['unevaluatedProperty']);
      return `unknown ${field([...path, name])}`;
    }
    case 'type':
      return `${field(path)} must be ${String(params['type']).split(',').map(article).join(' or ')}`;
    case 'enum': {
      const allowed = (params['allowedValues'] as unknown[] | undefined) ?? [];
      const list = allowed
        .slice(0, 20)
        .map((v) => JSON.stringify(v))
        .join(', ');
      return `${field(path)} must be one of: ${list}${allowed.length > 20 ? ', …' : ''}`;
    }
    case 'const':
      return `${field(path)} must equal ${JSON.stringify(params['allowedValue'])}`;
    case 'anyOf':
      return `${field(path)} does not match any of the accepted forms`;
    case 'oneOf':
      return params['passingSchemas'] === null || params['passingSchemas'] === undefined
        ? `${field(path)} does not match any of the accepted forms`
        : `${field(path)} matches more than one of the accepted forms; make it match exactly one`;
    case 'propertyNames':
      return `${field(path)} has a field whose name is not allowed`;
    default:
      return `${field(path)} ${error.message ?? `fails the ${error.keyword} rule`}`;
  }
}
