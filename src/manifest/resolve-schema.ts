import { isJsonObject, type JsonObject, type JsonSchema } from '../model/json.ts';
import { relativePathProblem, type FileRead } from './package-files.ts';
import type { SchemaOrigin } from './package-manifest.ts';
import { describeTomlValue, isTomlTable, tomlTableToJson } from './toml-document.ts';
import type { ValidationContext } from './validation-context.ts';
import { PACKAGE_LIMITS } from './versioning.ts';

/** A resolved schema and where it came from. */
export interface ResolvedSchema {
  readonly schema: JsonSchema;
  readonly from: SchemaOrigin;
}

function read(path: string, ctx: ValidationContext): FileRead {
  let result = ctx.reads.get(path);
  if (!result) {
    result = ctx.files.read(path, PACKAGE_LIMITS.maxSchemaBytes);
    ctx.reads.set(path, result);
  }
  return result;
}

/** Reads a schema file, reporting each way a read can be refused. */
function readSchemaFile(
  path: string,
  field: string,
  ctx: ValidationContext,
): JsonObject | undefined {
  const problem = relativePathProblem(path);
  if (problem !== undefined) {
    ctx.sink.add('schema_path_invalid', field, `schema path ${problem}`);
    return undefined;
  }
  const result = read(path, ctx);
  switch (result.kind) {
    case 'ok':
      break;
    case 'missing':
      ctx.sink.add('schema_missing', field, `schema file ${path} does not exist in the package`);
      return undefined;
    case 'symlink':
      ctx.sink.add(
        'schema_symlink',
        field,
        `schema file ${path} goes through the symlink ${result.component}; package files may not be symlinks`,
      );
      return undefined;
    case 'not_a_file':
      ctx.sink.add('schema_missing', field, `schema path ${path} is not a regular file`);
      return undefined;
    case 'too_large':
      ctx.sink.add(
        'schema_too_large',
        field,
        `schema file ${path} is ${result.bytes} bytes; the limit is ${PACKAGE_LIMITS.maxSchemaBytes}`,
      );
      return undefined;
    case 'encoding':
      ctx.sink.add('file_encoding', field, `schema file ${path} is not valid UTF-8`);
      return undefined;
    case 'unreadable':
      ctx.sink.add(
        'file_unreadable',
        field,
        `schema file ${path} cannot be read: ${result.reason}`,
      );
      return undefined;
    default: {
      const never: never = result;
      throw new Error(`unknown read outcome ${JSON.stringify(never)}`);
    }
  }
  const known = ctx.pool.fromFile(result.text);
  if (known) return known;
  let parsed: unknown;
  try {
    parsed = JSON.parse(result.text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message.split('\n')[0] : 'parse error';
    ctx.sink.add('schema_not_json', field, `schema file ${path} is not valid JSON (${reason})`);
    return undefined;
  }
  if (!isJsonObject(parsed)) {
    ctx.sink.add('schema_invalid', field, `schema file ${path} must hold a JSON object`);
    return undefined;
  }
  return ctx.pool.internFile(result.text, parsed);
}

/**
 * Resolves a `parameters` or `output_schema` value: an inline TOML table, or a string naming a
 * .json file under the package folder. Parameters must be an object schema at the top level (a
 * provider-visible tool cannot exist without one); both are compiled as strict JSON Schema
 * 2020-12, exactly as the registry will compile them.
 */
export function resolveSchema(
  raw: unknown,
  field: string,
  role: 'parameters' | 'output_schema',
  ctx: ValidationContext,
): ResolvedSchema | undefined {
  let schema: JsonSchema | undefined;
  let from: SchemaOrigin;
  if (typeof raw === 'string') {
    schema = readSchemaFile(raw, field, ctx);
    from = { kind: 'file', path: raw };
  } else if (isTomlTable(raw)) {
    const document = tomlTableToJson(raw, field, ctx.sink);
    schema = document && ctx.pool.intern(document);
    from = { kind: 'inline' };
  } else {
    ctx.sink.add(
      'field_type',
      field,
      `must be an inline table or a relative path to a .json file, not ${describeTomlValue(raw)}`,
    );
    return undefined;
  }
  if (schema === undefined) return undefined;
  if (role === 'parameters' && schema['type'] !== 'object') {
    ctx.sink.add(
      'schema_invalid',
      field,
      'parameters must be a JSON Schema whose top level is {"type": "object"}',
    );
    return undefined;
  }
  const problem = ctx.pool.problem(schema);
  if (problem !== undefined) {
    ctx.sink.add('schema_invalid', field, `schema ${problem}`);
    return undefined;
  }
  return { schema, from };
}
