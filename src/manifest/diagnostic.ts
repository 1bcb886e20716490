import type { JsonObject } from '../model/json.ts';
import { MeshError } from '../tool/errors.ts';

/**
 * Every stable diagnostic code. Callers and tests match on these; messages may be reworded, codes
 * may not. Grouped by the rule that raises them.
 */
export const DIAGNOSTIC_CODES = Object.freeze([
  // Reading files.
  'manifest_too_large',
  'file_unreadable',
  'file_encoding',
  'package_symlink',
  'folder_name_invalid',
  'toml_syntax',
  // A check that failed for a reason of its own (input nested too deeply to parse, for one).
  'package_check_failed',
  // The manifest's own shape.
  'manifest_version_unsupported',
  'field_missing',
  'field_type',
  'field_unknown',
  'field_empty',
  'text_control_character',
  'value_not_json',
  // [package]
  'package_id_invalid',
  'version_invalid',
  'mesh_api_invalid',
  'mesh_api_unsatisfied',
  'hook_protocol_unsupported',
  'in_flight_unknown',
  // [[config]]
  'config_key_invalid',
  'config_key_duplicate',
  'disposition_unknown',
  'config_type_unknown',
  'default_type_mismatch',
  'secret_default_forbidden',
  'secret_type_not_string',
  'secret_kind_missing',
  'secret_kind_forbidden',
  'secret_kind_invalid',
  'secret_kind_duplicate',
  // [[tools]]
  'tools_missing',
  'tool_name_invalid',
  'tool_name_duplicate',
  'class_unknown',
  'replay_unknown',
  'replay_not_allowed',
  'parks_not_allowed',
  'need_unknown',
  'need_duplicate',
  'need_dangling',
  'need_ambiguous',
  'handler_invalid',
  'handler_duplicate',
  // Schema documents.
  'schema_path_invalid',
  'schema_symlink',
  'schema_missing',
  'schema_too_large',
  'schema_not_json',
  'schema_invalid',
  'schema_unreferenced',
  // SKILL.md
  'skill_invalid',
  'skill_too_large',
  // The package set and its bindings.
  'package_id_duplicate',
  'binding_missing',
  'binding_extra',
  'binding_duplicate',
  'binding_source_unsupported',
  'hook_binding_missing',
  'hook_binding_extra',
  'digest_mismatch',
  'registry_refused',
] as const);

/** A stable diagnostic code. */
export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

/**
 * One refusal, as a value. `file` is the path as shown to the operator (e.g.
 * `tools/memory/manifest.toml`); `field` is a dotted path into the file (`tools[2].parameters`),
 * empty when the refusal is about the whole file. Messages name fields and rules, never values
 * from the manifest, so a secret pasted into the wrong place is not echoed.
 */
export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly file: string;
  readonly field: string;
  readonly message: string;
  /** 1-based line and column, for syntax errors. */
  readonly line?: number;
  readonly column?: number;
  /** The package id (or folder when the id is unknown), the tool and the handler concerned. */
  readonly package?: string;
  readonly tool?: string;
  readonly handler?: string;
}

/** The optional attribution of a diagnostic. */
export type DiagnosticContext = {
  -readonly [K in 'package' | 'tool' | 'handler' | 'line' | 'column']?: Diagnostic[K];
};

/** Builds a frozen diagnostic, leaving out absent attribution so it serializes cleanly. */
export function diagnostic(
  code: DiagnosticCode,
  file: string,
  field: string,
  message: string,
  context: DiagnosticContext = {},
): Diagnostic {
  const out: { -readonly [K in keyof Diagnostic]: Diagnostic[K] } = { code, file, field, message };
  if (context.line !== undefined) out.line = context.line;
  if (context.column !== undefined) out.column = context.column;
  if (context.package !== undefined) out.package = context.package;
  if (context.tool !== undefined) out.tool = context.tool;
  if (context.handler !== undefined) out.handler = context.handler;
  return Object.freeze(out);
}

/** `file[:line:column]: field: message`, the one-line form the CLI and the build print. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.line === undefined ? d.file : `${d.file}:${d.line}:${d.column ?? 1}`;
  return d.field === '' ? `${where}: ${d.message}` : `${where}: ${d.field}: ${d.message}`;
}

/** Stable order for output: by file, then field, then code. */
export function sortDiagnostics(list: readonly Diagnostic[]): Diagnostic[] {
  const key = (d: Diagnostic) => [d.file, String(d.line ?? 0).padStart(9, '0'), d.field, d.code];
  return [...list].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) {
      const x = ka[i] ?? '';
      const y = kb[i] ?? '';
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });
}

/**
 * First-party packages failed verification. Carries every diagnostic (not just the first) so an
 * operator fixes them in one pass; the process refuses to start (first party fails closed).
 */
export class ManifestInvalidError extends MeshError {
  static readonly code = 'manifest_invalid';
  readonly diagnostics: readonly Diagnostic[];

  constructor(diagnostics: readonly Diagnostic[]) {
    const sorted = sortDiagnostics(diagnostics);
    super(
      ManifestInvalidError.code,
      `tool packages failed verification:\n${sorted.map(formatDiagnostic).join('\n')}`,
      { diagnostics: sorted.map((d): JsonObject => ({ ...d })) },
    );
    this.diagnostics = Object.freeze(sorted);
  }
}

/**
 * Collects diagnostics for one file, filling in the file and the package (and, while reading a
 * tool, the tool and its handler) so every refusal is attributed without threading them through.
 */
export class DiagnosticSink {
  readonly list: Diagnostic[] = [];
  private scope: Pick<DiagnosticContext, 'tool' | 'handler'> = {};

  constructor(
    readonly file: string,
    public packageName?: string,
  ) {}

  /** Records a refusal at `field`. */
  add(
    code: DiagnosticCode,
    field: string,
    message: string,
    context: Omit<DiagnosticContext, 'package'> = {},
  ): void {
    const merged: DiagnosticContext = { ...this.scope, ...context };
    if (this.packageName !== undefined) merged.package = this.packageName;
    this.list.push(diagnostic(code, this.file, field, message, merged));
  }

  /** Runs `read` with every diagnostic it adds attributed to this tool and handler. */
  within<T>(scope: Pick<DiagnosticContext, 'tool' | 'handler'>, read: () => T): T {
    const previous = this.scope;
    this.scope = { ...previous, ...scope };
    try {
      return read();
    } finally {
      this.scope = previous;
    }
  }

  get size(): number {
    return this.list.length;
  }
}
