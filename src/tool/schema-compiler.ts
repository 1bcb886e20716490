import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from '../model/json.ts';
import { MeshError } from './errors.ts';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** A schema compiled for repeated validation. */
export interface CompiledSchema {
  readonly schema: JsonSchema;
  validate(value: unknown): readonly ErrorObject[];
}

/**
 * How strictly a schema is read. First-party schemas are strict: an unknown keyword is a typo and
 * fails loud. Remote schemas are read leniently: unknown keywords are ignored, but the document
 * must still be valid JSON Schema 2020-12.
 */
export type SchemaStrictness = 'strict' | 'lenient';

function makeAjv(strictness: SchemaStrictness): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    // Start-up compiles every tool's schema once; the optimiser's passes cost more there than
    // they save on validating small argument objects.
    code: { optimize: false },
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

const instances: Record<SchemaStrictness, Ajv2020 | undefined> = {
  strict: undefined,
  lenient: undefined,
};

function ajvFor(strictness: SchemaStrictness): Ajv2020 {
  return (instances[strictness] ??= makeAjv(strictness));
}

/** A schema that is not valid JSON Schema 2020-12; `reason` names the keyword, never data. */
export class InvalidSchemaError extends MeshError {
  static readonly code = 'invalid_schema';
  constructor(reason: string) {
    super(InvalidSchemaError.code, reason);
  }
}

/**
 * Compiles a JSON Schema 2020-12 document with ajv's 2020 build. Refuses documents that declare
 * another dialect in `$schema`, fail the meta-schema, or (when strict) use unknown keywords.
 */
export function compileSchema(
  schema: JsonSchema,
  strictness: SchemaStrictness = 'strict',
): CompiledSchema {
  const dialect = schema['$schema'];
  if (
    dialect !== undefined &&
    dialect !== JSON_SCHEMA_2020_12 &&
    dialect !== `${JSON_SCHEMA_2020_12}#`
  ) {
    throw new InvalidSchemaError(
      `declares $schema ${JSON.stringify(dialect)}; only JSON Schema 2020-12 (${JSON_SCHEMA_2020_12}) is accepted`,
    );
  }
  const ajv = ajvFor(strictness);
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(schema);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidSchemaError(`is not valid JSON Schema 2020-12: ${message}`);
  }
  return Object.freeze({
    schema,
    validate(value: unknown): readonly ErrorObject[] {
      return fn(value) ? [] : (fn.errors ?? []);
    },
  });
}

export type { ErrorObject };
