import { parse, TomlDate, TomlError } from 'smol-toml';
import type { JsonObject, JsonValue } from '../model/json.ts';
import type { DiagnosticSink } from './diagnostic.ts';
import { PACKAGE_LIMITS } from './versioning.ts';

/** A TOML table as smol-toml returns it (null-prototype objects). */
export type TomlTable = Readonly<Record<string, unknown>>;

/** True for a TOML table (not an array, not a date). */
export function isTomlTable(value: unknown): value is TomlTable {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isTomlDate(value);
}

function isTomlDate(value: unknown): boolean {
  return value instanceof TomlDate || value instanceof Date;
}

/** How a TOML value is named in messages ("must be a string, not an integer"). */
export function describeTomlValue(value: unknown): string {
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a float';
  if (typeof value === 'bigint') return 'an integer';
  if (Array.isArray(value)) return 'an array';
  if (isTomlDate(value)) return 'a date-time';
  if (isTomlTable(value)) return 'a table';
  return 'an unsupported value';
}

/** Size of a text in UTF-8 bytes: caps are in bytes, as on disk. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Parses manifest text. Refuses a text over the size cap before parsing it, and reports a syntax
 * error with its line and column but without smol-toml's excerpt, which would echo the file's
 * content (possibly a secret pasted in the wrong place).
 */
export function parseManifestToml(text: string, sink: DiagnosticSink): TomlTable | undefined {
  const bytes = utf8Bytes(text);
  if (bytes > PACKAGE_LIMITS.maxManifestBytes) {
    sink.add(
      'manifest_too_large',
      '',
      `manifest is ${bytes} bytes; the limit is ${PACKAGE_LIMITS.maxManifestBytes}`,
    );
    return undefined;
  }
  try {
    return parse(text, {
      unsafeKeyBehaviour: 'throw',
      maxDepth: PACKAGE_LIMITS.maxTomlDepth,
    });
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = (error.message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '');
      sink.add('toml_syntax', '', `invalid TOML: ${reason}`, {
        line: error.line,
        column: error.column,
      });
      return undefined;
    }
    throw error;
  }
}

/** A dotted path segment; keys that are not plain words are quoted. */
export function fieldPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  const plain = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
  if (base === '') return plain;
  return /^[A-Za-z0-9_-]+$/.test(key) ? `${base}.${key}` : `${base}[${plain}]`;
}

/**
 * Converts a TOML value to JSON, refusing what JSON cannot hold (date-times, inf and nan) at its
 * exact path. Returns undefined when anything was refused.
 */
export function tomlToJson(
  value: unknown,
  field: string,
  sink: DiagnosticSink,
): JsonValue | undefined {
  let ok = true;
  // Keys from `field` down to the current node; the dotted path is built only for a refusal.
  const trail: (string | number)[] = [];
  const refuse = (message: string): null => {
    ok = false;
    sink.add('value_not_json', trail.reduce<string>(fieldPath, field), message);
    return null;
  };
  const convert = (node: unknown): JsonValue => {
    if (typeof node === 'string' || typeof node === 'boolean') return node;
    if (typeof node === 'number') {
      return Number.isFinite(node) ? node : refuse('inf and nan are not JSON numbers');
    }
    if (Array.isArray(node)) {
      const out: JsonValue[] = [];
      for (let i = 0; i < node.length; i++) {
        trail.push(i);
        out.push(convert(node[i]));
        trail.pop();
      }
      return out;
    }
    if (isTomlTable(node)) {
      const out: Record<string, JsonValue> = {};
      for (const key of Object.keys(node)) {
        trail.push(key);
        out[key] = convert(node[key]);
        trail.pop();
      }
      return out;
    }
    return refuse(`${describeTomlValue(node)} is not a JSON value`);
  };
  const result = convert(value);
  return ok ? result : undefined;
}

/** Converts a TOML table to a JSON object (see {@link tomlToJson}). */
export function tomlTableToJson(
  table: TomlTable,
  field: string,
  sink: DiagnosticSink,
): JsonObject | undefined {
  return tomlToJson(table, field, sink) as JsonObject | undefined;
}
