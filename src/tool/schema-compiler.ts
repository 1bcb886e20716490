import AjvDraft07Module, { type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';
import type { JsonSchema } from '../model/json.ts';
import { MeshError } from './errors.ts';
import { measureSchema } from './schema-cost.ts';

// ajv and ajv-formats ship CommonJS with a default export; under NodeNext they arrive wrapped.
type AnyAjv = Ajv2020 | Ajv2019 | InstanceType<typeof AjvDraft07Module.default>;
const AjvDraft07 = (AjvDraft07Module as unknown as { default: typeof AjvDraft07Module.default })
  .default;
const addFormats = addFormatsModule as unknown as (ajv: AnyAjv) => AnyAjv;

export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** The JSON Schema dialects Mesh reads, each with the Ajv build made for it. */
export type SchemaDialect = '2020-12' | '2019-09' | 'draft-07';

/**
 * The `$schema` values that name each dialect, as servers write them: with or without the empty
 * fragment, over http or https. No `$schema` means 2020-12 (MCP's default dialect).
 */
const DIALECTS: ReadonlyMap<string, SchemaDialect> = new Map(
  (
    [
      ['json-schema.org/draft/2020-12/schema', '2020-12'],
      ['json-schema.org/draft/2019-09/schema', '2019-09'],
      ['json-schema.org/draft-07/schema', 'draft-07'],
    ] as const
  ).flatMap(([path, dialect]) =>
    ['http://', 'https://'].flatMap((scheme) =>
      ['', '#'].map((fragment) => [`${scheme}${path}${fragment}`, dialect] as const),
    ),
  ),
);

/** The dialect a schema declares, or undefined when its `$schema` names one Mesh does not read. */
export function schemaDialect(schema: JsonSchema): SchemaDialect | undefined {
  const declared = schema['$schema'];
  if (declared === undefined) return '2020-12';
  return typeof declared === 'string' ? DIALECTS.get(declared) : undefined;
}

/** A schema compiled for repeated validation. */
export interface CompiledSchema {
  readonly schema: JsonSchema;
  validate(value: unknown): readonly ErrorObject[];
}

/**
 * How strictly a schema is read. First-party schemas are strict: JSON Schema 2020-12 only, and an
 * unknown keyword is a typo that fails loud. Remote schemas are read leniently: unknown keywords
 * are ignored, and the document may be written in 2020-12, 2019-09 or draft-07 (what servers on
 * the TypeScript SDK v1 declare), but must be valid in the dialect it declares.
 */
export type SchemaStrictness = 'strict' | 'lenient';

/** What Ajv asks of a regular expression: a test, and a text that tells two patterns apart. */
interface PatternMatcher {
  test(input: string): boolean;
  toString(): string;
}

/**
 * The regular-expression engine for remote schemas' `pattern`, `patternProperties` and
 * `propertyNames`: RE2's, ported to JavaScript (re2js), whose match time is linear in the input
 * whatever the pattern. V8's engine backtracks: `^(a+)+$` against 28 `a`s and a `!` takes seconds
 * and stops the event loop, so a server could freeze Mesh with one tool schema. A pattern RE2 does
 * not read (lookaround, backreferences) makes the schema fail to compile, and the tool is withheld
 * with that reason. First-party schemas keep V8's engine: their patterns are reviewed code and use
 * lookahead.
 */
function linearPattern(pattern: string, flags: string): PatternMatcher {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch {
    throw new Error(
      `pattern ${JSON.stringify(pattern.slice(0, 120))} is not supported: remote schemas are ` +
        'matched in linear time, without lookaround or backreferences',
    );
  }
  return {
    test: (input: string) => compiled.test(input),
    toString: () => `/${pattern}/${flags}`,
  };
}
// Ajv's type wants the code that builds the engine in standalone output, which Mesh never writes.
linearPattern.code = 'linearPattern';

function makeAjv(strictness: SchemaStrictness, dialect: SchemaDialect): AnyAjv {
  const Build = dialect === '2020-12' ? Ajv2020 : dialect === '2019-09' ? Ajv2019 : AjvDraft07;
  const ajv = new Build({
    allErrors: true,
    // Start-up compiles every tool's schema once; the optimiser's passes cost more there than
    // they save on validating small argument objects.
    code: { optimize: false, ...(strictness === 'lenient' ? { regExp: linearPattern } : {}) },
    strictSchema: strictness === 'strict',
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    // Schemas are compiled one by one; an `$id` shared by two tools must not collide.
    addUsedSchema: false,
    // Validation never rewrites the arguments the model sent.
    useDefaults: false,
    coerceTypes: false,
    removeAdditional: false,
  });
  addFormats(ajv);
  return ajv;
}

const instances = new Map<string, AnyAjv>();

function ajvFor(strictness: SchemaStrictness, dialect: SchemaDialect): AnyAjv {
  const key = `${strictness} ${dialect}`;
  let ajv = instances.get(key);
  if (!ajv) instances.set(key, (ajv = makeAjv(strictness, dialect)));
  return ajv;
}

/** A schema Mesh cannot read; `reason` names the dialect or keyword, never data. */
export class InvalidSchemaError extends MeshError {
  static readonly code = 'invalid_schema';
  constructor(reason: string) {
    super(InvalidSchemaError.code, reason);
  }
}

/**
 * Compiles a schema with the Ajv build for its dialect. Refuses documents that declare a dialect
 * Mesh does not read (when strict: anything but 2020-12), fail their meta-schema, (when strict)
 * use unknown keywords, or (when lenient, that is untrusted) cost more to check than Mesh allows.
 */
export function compileSchema(
  schema: JsonSchema,
  strictness: SchemaStrictness = 'strict',
): CompiledSchema {
  const dialect = schemaDialect(schema);
  if (dialect === undefined || (strictness === 'strict' && dialect !== '2020-12')) {
    const accepted =
      strictness === 'strict'
        ? `only JSON Schema 2020-12 (${JSON_SCHEMA_2020_12}) is accepted`
        : 'JSON Schema 2020-12, 2019-09 and draft-07 are accepted';
    throw new InvalidSchemaError(
      `declares $schema ${JSON.stringify(schema['$schema']).slice(0, 120)}; ${accepted}`,
    );
  }
  // An untrusted schema is measured first: its author chooses what a check costs (schema-cost.ts).
  if (strictness === 'lenient') {
    const cost = measureSchema(schema);
    if ('refused' in cost) throw new InvalidSchemaError(cost.refused);
  }
  const ajv = ajvFor(strictness, dialect);
  let fn: ValidateFunction;
  // The build already knows its dialect; `$schema` is left out so that every spelling servers use
  // (http or https, with or without `#`) reads the same.
  const { $schema: _declared, ...body } = schema;
  try {
    fn = ajv.compile(body);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidSchemaError(`is not valid JSON Schema ${dialect}: ${message}`);
  }
  return Object.freeze({
    schema,
    validate(value: unknown): readonly ErrorObject[] {
      return fn(value) ? NO_ERRORS : (fn.errors ?? NO_ERRORS);
    },
  });
}

/** What a value that passes is answered: one frozen list, not a new one per check. */
const NO_ERRORS: readonly ErrorObject[] = Object.freeze([]);

export type { ErrorObject };
