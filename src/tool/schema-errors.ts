import type { ErrorObject } from 'ajv';
import { isJsonObject, nestsDeeperThan } from '../model/json.ts';
import { pathStep } from './storable-text.ts';

/*
 * How a JSON Schema refusal is said to whoever sent the value: the field it is about and what was
 * wrong, never the value itself. The HTTP faces and the operation catalog name fields this way.
 */

/** The dotted path (`rules.0.match`) of the value a schema error is about; '' for the body. */
function instancePathOf(e: ErrorObject): string {
  return e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

/**
 * The field a schema error names, as refusals name it: `body`, `body.persona`; for a missing or
 * unknown field, that field. `root` names the whole value (`body` for a request body).
 */
export function schemaErrorField(e: ErrorObject, root = 'body'): string {
  const at = instancePathOf(e);
  const params = e.params as { additionalProperty?: unknown; missingProperty?: unknown };
  const named =
    e.keyword === 'additionalProperties'
      ? params.additionalProperty
      : e.keyword === 'required'
        ? params.missingProperty
        : undefined;
  const field = [root, at, typeof named === 'string' ? named : '']
    .filter(Boolean)
    .join('.')
    .replace(/[^\x20-\x7e]/g, '?');
  return field.length > 200 ? `${field.slice(0, 200)}…` : field;
}

/** Says what was wrong with a body without quoting any value from it. */
export function describeSchemaError(e: ErrorObject): string {
  const at = instancePathOf(e);
  const where = at === '' ? 'the body' : `field \`${at}\``;
  const clip = (s: unknown) => String(s).slice(0, 64);
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown field \`${clip((e.params as { additionalProperty: string }).additionalProperty)}\`${at ? ` in ${at}` : ''}`;
    case 'required':
      return `missing field \`${[at, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.')}\``;
    case 'enum': {
      const allowed = ((e.params as { allowedValues?: unknown[] }).allowedValues ?? []).map(String);
      return `${where} must be one of ${allowed.slice(0, 12).map(clip).join(', ')}`;
    }
    case 'type':
      return `${where} must be ${(e.params as { type: string }).type}`;
    default:
      return `${where} ${e.message ?? 'is not valid'}`;
  }
}

/**
 * The deepest nesting of objects and arrays a field of a request body or an operation's input may
 * have. No operation needs more (tool arguments allow 64 levels). Deeper is refused before the
 * schema or anything else walks the value: a recursive walker (JSON.stringify among them)
 * overflows the call stack on nesting that a JSON body carries in a few kilobytes.
 */
export const MAX_INPUT_DEPTH = 100;

/**
 * Whether any field of a value nests deeper than {@link MAX_INPUT_DEPTH}: the refusal's field
 * (`body.arguments`, or `root` when the value itself is too deep and not an object) and message,
 * or undefined when it fits. Never quotes the value.
 */
export function nestingRefusal(
  value: unknown,
  root: string,
): { readonly field: string; readonly message: string } | undefined {
  if (!nestsDeeperThan(value, MAX_INPUT_DEPTH + 1)) return undefined;
  const fields = isJsonObject(value) ? Object.entries(value) : [];
  const [name] = fields.find(([, field]) => nestsDeeperThan(field, MAX_INPUT_DEPTH)) ?? [];
  const levels = `nests deeper than ${MAX_INPUT_DEPTH} levels of objects and arrays`;
  return name === undefined
    ? { field: root, message: `the ${root} ${levels}` }
    : { field: `${root}.${pathStep(name)}`, message: `field \`${pathStep(name)}\` ${levels}` };
}
