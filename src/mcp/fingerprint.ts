import { createHash } from 'node:crypto';
import type { JsonObject, JsonValue } from '../model/json.ts';

/**
 * The parts of a remote tool definition that make it what it is. A fingerprint covers all of
 * them, so a changed description, schema, annotation or icon is a changed tool.
 */
export const DEFINITION_FIELDS = [
  'name',
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
  'execution',
  'icons',
  '_meta',
] as const;

/** JSON with object keys sorted at every level: one text for one value. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value))
    return `[${(value as readonly JsonValue[]).map(canonicalJson).join(',')}]`;
  const object = value as JsonObject;
  const keys = Object.keys(object)
    .filter((k) => object[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(object[k] as JsonValue)}`).join(',')}}`;
}

/** The complete definition as Mesh keeps it: the listed fields the server sent, nothing else. */
export function remoteDefinition(tool: Readonly<Record<string, unknown>>): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const field of DEFINITION_FIELDS) {
    const value = tool[field];
    if (value !== undefined) out[field] = JSON.parse(JSON.stringify(value)) as JsonValue;
  }
  return out;
}

/** SHA-256 (hex) of the canonical JSON of a complete remote definition. */
export function fingerprint(definition: JsonObject): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}
