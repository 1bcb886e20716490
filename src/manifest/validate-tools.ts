import {
  isNeed,
  REPLAYS,
  TOOL_CLASSES,
  type Need,
  type Replay,
  type ToolClass,
} from '../tool/definition.ts';
import { TOOL_NAME_PATTERN } from '../tool/registry.ts';
import type { ToolDeclaration } from './package-manifest.ts';
import { resolveSchema } from './resolve-schema.ts';
import type { TableReader } from './table-reader.ts';
import type { ValidationContext } from './validation-context.ts';
import { HANDLER_NAME_PATTERN } from './versioning.ts';
import { checkDescription } from './text-rules.ts';

/** Checks a handler or hook binding name; reports and returns false when it is not one. */
export function checkBindingName(name: string, field: string, ctx: ValidationContext): boolean {
  if (HANDLER_NAME_PATTERN.test(name) && name !== 'default') return true;
  ctx.sink.add(
    'handler_invalid',
    field,
    `must name a named export (an identifier matching ${HANDLER_NAME_PATTERN.source}, not default)`,
  );
  return false;
}

function readEnum<T extends string>(
  r: TableReader,
  key: string,
  values: readonly T[],
  code: 'class_unknown' | 'replay_unknown',
  ctx: ValidationContext,
): T | undefined {
  const value = r.string(key, { required: true });
  if (value === undefined) return undefined;
  if ((values as readonly string[]).includes(value)) return value as T;
  ctx.sink.add(code, r.at(key), `must be one of ${values.join(', ')}`);
  return undefined;
}

function readNeeds(r: TableReader, ctx: ValidationContext): Need[] | undefined {
  const needs: Need[] = [];
  let ok = true;
  for (const { value, field } of r.strings('needs')) {
    if (!isNeed(value)) {
      ok = false;
      ctx.sink.add(
        'need_unknown',
        field,
        'must be workspace, browser, secret:<kind> or service:<id>',
      );
    } else if (needs.includes(value)) {
      ok = false;
      ctx.sink.add('need_duplicate', field, 'is declared twice');
    } else {
      needs.push(value);
    }
  }
  return ok ? needs : undefined;
}

/**
 * Checks the replay policy against the class and the package. `internal` is reserved for
 * Mesh-owned packages that write only to Mesh's own database; an effect can never promise to be
 * `replayable` (every effect call is effectful; `internal` is the one documented exception).
 */
function checkReplay(
  r: TableReader,
  toolClass: ToolClass | undefined,
  replay: Replay | undefined,
  packageId: string | undefined,
  ctx: ValidationContext,
): boolean {
  if (replay === 'internal' && packageId !== undefined && !ctx.meshOwnedPackages.has(packageId)) {
    ctx.sink.add(
      'replay_not_allowed',
      r.at('replay'),
      'internal replay is reserved for Mesh-owned packages that write only to Mesh’s own database',
    );
    return false;
  }
  if (replay === 'replayable' && toolClass === 'effect') {
    ctx.sink.add(
      'replay_not_allowed',
      r.at('replay'),
      'an effect tool cannot be replayable: every effect call is effectful',
    );
    return false;
  }
  return true;
}

/**
 * `parks = true`: a call of the tool parks the run until a person of its conversation acts, and
 * that becomes the call's observation. Only Mesh's own packages may declare it, and only with
 * `internal` replay: the engine, not the handler, carries such a call out.
 */
function checkParks(
  r: TableReader,
  replay: Replay | undefined,
  packageId: string | undefined,
  ctx: ValidationContext,
): boolean {
  if (packageId !== undefined && !ctx.meshOwnedPackages.has(packageId)) {
    ctx.sink.add(
      'parks_not_allowed',
      r.at('parks'),
      'parking the run is reserved for Mesh-owned packages',
    );
    return false;
  }
  if (replay !== undefined && replay !== 'internal') {
    ctx.sink.add('parks_not_allowed', r.at('parks'), 'a parking tool has internal replay');
    return false;
  }
  return true;
}

/** Reads one `[[tools]]` entry into the declaration a Definition is built from. */
export function readTool(
  r: TableReader,
  packageId: string | undefined,
  ctx: ValidationContext,
): ToolDeclaration | undefined {
  const name = r.string('name', { required: true });
  if (name !== undefined && !TOOL_NAME_PATTERN.test(name)) {
    ctx.sink.add(
      'tool_name_invalid',
      r.at('name'),
      `must match ${TOOL_NAME_PATTERN.source} (what model providers accept)`,
    );
  }
  const description = r.string('description', { required: true });
  const descriptionOk = checkDescription(r, description, ctx);
  const rawParameters = r.raw('parameters');
  let parameters;
  if (rawParameters === undefined) {
    ctx.sink.add(
      'field_missing',
      r.at('parameters'),
      'is required (every tool needs an input schema)',
    );
  } else {
    parameters = resolveSchema(rawParameters, r.at('parameters'), 'parameters', ctx);
  }
  const rawOutput = r.raw('output_schema');
  const output =
    rawOutput === undefined
      ? undefined
      : resolveSchema(rawOutput, r.at('output_schema'), 'output_schema', ctx);
  const toolClass = readEnum(r, 'class', TOOL_CLASSES, 'class_unknown', ctx);
  const replay = readEnum(r, 'replay', REPLAYS, 'replay_unknown', ctx);
  const replayOk = checkReplay(r, toolClass, replay, packageId, ctx);
  const needs = readNeeds(r, ctx);
  const parks = r.boolean('parks');
  const parksOk = parks !== true || checkParks(r, replay, packageId, ctx);
  const handler = r.string('handler', { required: true });
  const handlerOk = handler !== undefined && checkBindingName(handler, r.at('handler'), ctx);
  r.finish();

  if (
    name === undefined ||
    !TOOL_NAME_PATTERN.test(name) ||
    description === undefined ||
    !descriptionOk
  ) {
    return undefined;
  }
  if (!parameters || (rawOutput !== undefined && !output)) return undefined;
  if (!toolClass || !replay || !replayOk || !needs || !handlerOk || !parksOk) return undefined;
  const declaration: ToolDeclaration = {
    name,
    description,
    parameters: parameters.schema,
    parametersFrom: parameters.from,
    class: toolClass,
    replay,
    needs,
    handler,
    ...(parks === true ? { parks: true } : {}),
  };
  return output
    ? { ...declaration, outputSchema: output.schema, outputSchemaFrom: output.from }
    : declaration;
}
