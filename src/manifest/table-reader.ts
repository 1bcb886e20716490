import type { DiagnosticSink } from './diagnostic.ts';
import { describeTomlValue, fieldPath, isTomlTable, type TomlTable } from './toml-document.ts';

/**
 * Reads the fields of one TOML table strictly: every getter marks its key as known, and
 * {@link TableReader.finish} refuses whatever was not read, so a typo fails loud instead of being
 * ignored. Type mismatches are reported at the field's dotted path and the getter returns
 * undefined, so validation continues and collects every problem in one pass.
 */
export class TableReader {
  private readonly known = new Set<string>();

  constructor(
    readonly values: TomlTable,
    readonly path: string,
    private readonly sink: DiagnosticSink,
  ) {}

  /** The dotted path of a key of this table. */
  at(key: string): string {
    return fieldPath(this.path, key);
  }

  /** Marks a key as known and returns its raw value. */
  raw(key: string): unknown {
    this.known.add(key);
    return Object.hasOwn(this.values, key) ? this.values[key] : undefined;
  }

  private missing(key: string, what: string): undefined {
    this.sink.add('field_missing', this.at(key), `is required (${what})`);
    return undefined;
  }

  private wrong(key: string, what: string, value: unknown): undefined {
    this.sink.add('field_type', this.at(key), `must be ${what}, not ${describeTomlValue(value)}`);
    return undefined;
  }

  /** A string field; `required` fields must also be non-empty. */
  string(key: string, options: { required: boolean }): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return options.required ? this.missing(key, 'a string') : undefined;
    if (typeof value !== 'string') return this.wrong(key, 'a string', value);
    if (options.required && value.trim() === '') {
      this.sink.add('field_empty', this.at(key), 'must not be empty');
      return undefined;
    }
    return value;
  }

  /** An integer field. */
  integer(key: string, options: { required: boolean }): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return options.required ? this.missing(key, 'an integer') : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      return this.wrong(key, 'an integer', value);
    }
    return value;
  }

  /** An optional boolean field. */
  boolean(key: string): boolean | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') return this.wrong(key, 'true or false', value);
    return value;
  }

  /** A nested table; absent is fine unless required. */
  table(key: string, options: { required: boolean }): TableReader | undefined {
    const value = this.raw(key);
    if (value === undefined) return options.required ? this.missing(key, 'a table') : undefined;
    if (!isTomlTable(value)) return this.wrong(key, 'a table', value);
    return new TableReader(value, this.at(key), this.sink);
  }

  /** An array of tables (`[[key]]`); absent reads as empty. */
  tables(key: string): TableReader[] {
    const value = this.raw(key);
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.wrong(key, `an array of tables ([[${key}]])`, value);
      return [];
    }
    const out: TableReader[] = [];
    value.forEach((item: unknown, i) => {
      const path = fieldPath(this.at(key), i);
      if (isTomlTable(item)) out.push(new TableReader(item, path, this.sink));
      else this.sink.add('field_type', path, `must be a table, not ${describeTomlValue(item)}`);
    });
    return out;
  }

  /** An array of strings; absent reads as empty. Non-strings are refused at their index. */
  strings(key: string): { value: string; field: string }[] {
    const value = this.raw(key);
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.wrong(key, 'an array of strings', value);
      return [];
    }
    const out: { value: string; field: string }[] = [];
    value.forEach((item: unknown, i) => {
      const field = fieldPath(this.at(key), i);
      if (typeof item === 'string') out.push({ value: item, field });
      else this.sink.add('field_type', field, `must be a string, not ${describeTomlValue(item)}`);
    });
    return out;
  }

  /**
   * Refuses every key no getter asked for. Call once, after reading all known fields; `expected`
   * replaces the default message (e.g. to list the hook names).
   */
  finish(expected = 'is not a field of manifest schema v1'): void {
    for (const key of Object.keys(this.values)) {
      if (!this.known.has(key)) this.sink.add('field_unknown', this.at(key), expected);
    }
  }
}
