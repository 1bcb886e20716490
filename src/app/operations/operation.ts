import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { JsonSchema } from '../../model/json.ts';
import type { ErrorCode } from '../../tool/error-codes.ts';
import type { Mesh } from '../mesh.ts';
import type { InputSchema } from './input.ts';

/*
 * The operation catalog's unit: one thing an operator can do, declared once — its name, input and
 * output schemas, the errors it answers, how the HTTP API and the CLI reach it, and the use case it
 * runs. The faces are generated from the declaration (src/server/api/operations.ts for the route
 * and its OpenAPI entry, src/cli/operation-command.ts for the subcommand and its help), and every
 * face validates the input the same way, here, before the use case runs.
 *
 * A declaration module imports only types and schemas: the CLI reads declarations to print help,
 * so the work behind `run` is imported when it runs.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who asks: the acting operator, as messages and audit records name them. */
export interface Caller {
  readonly actor: string;
  /**
   * Whether the credential may post for someone it names (an `actor` field): a relay token (a
   * chat bridge posting for its users), or the machine's own CLI. Any other caller acts only as
   * itself.
   */
  readonly relay?: boolean;
  /** This Mesh's origin as the caller reached it, when it came over HTTP (not the socket). */
  readonly origin?: string;
}

/** How the HTTP API serves an operation. Path parameters are input fields of the same name. */
export interface HttpFace<O = unknown> {
  readonly method: HttpMethod;
  readonly path: string;
  /** The success status (200 unless said). */
  readonly status?: 200 | 201 | 202 | 204;
  /** Fields of a POST, PUT or PATCH given as query parameters rather than in the body. */
  readonly query?: readonly string[];
  /**
   * An integer field that an RFC 7240 `Prefer: wait=N` header fills when the request does not
   * give it (cut to the field's maximum; the answer says `Preference-Applied`).
   */
  readonly preferWait?: string;
  /** The status and headers for an output, where they depend on it (a 202 until settled). */
  answer?(output: O): {
    readonly status: 200 | 201 | 202;
    readonly headers?: Record<string, string>;
  };
}

/** How the CLI offers an operation: `mesh <group> <verb>`. */
export interface CliFace<O> {
  readonly command: readonly [group: string, verb: string];
  /** Input fields given as positional arguments, in order (the rest are `--flags`). */
  readonly positionals?: readonly string[];
  /** Input fields read from the file a flag names: `{persona: 'persona-file'}`. */
  readonly files?: Readonly<Record<string, string>>;
  /** Boolean fields given as bare switches (`--refresh`) rather than `--flag on|off`. */
  readonly switches?: readonly string[];
  /** Flags named otherwise than their field: `{arguments: 'args'}`. */
  readonly flags?: Readonly<Record<string, string>>;
  /**
   * Fields read from their flag's text by a reader of their own (`all` or `a,b`, `30m`); a reader
   * refuses text it cannot read by throwing, naming the flag it is given.
   */
  readonly readers?: Readonly<Record<string, (text: string, flag: string) => unknown>>;
  /**
   * Further verbs that run the operation with some fields fixed: `{exclude: {excluded: true}}`
   * makes `mesh mcp exclude TOOL` the same as `mesh mcp tool TOOL --excluded on`.
   */
  readonly aliases?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /**
   * The output as lines for a person on standard output, with the input it answers (a 204 has no
   * output to name what it did); `--json` prints the output itself.
   */
  print(output: O, input: Readonly<Record<string, unknown>>): readonly string[];
  /**
   * What the operation destroys, for an operation the CLI runs only with `--yes`: without it, the
   * command refuses with this text and does nothing.
   */
  readonly confirm?: string;
  /** A line for standard error beside the output (what a script piping stdout does not want). */
  note?(output: O): string | undefined;
  /** The exit code for an output (0 unless said: a tool call that came to an error is 1). */
  exitCode?(output: O): number;
}

/** A face an operation is deliberately not on, with the reason. */
export interface NotOnFace {
  readonly notOnCli: string;
}

export interface Operation<I = never, O = unknown> {
  /** `group.verb`, unique: `runs.list`. */
  readonly name: string;
  readonly summary: string;
  /** A longer account (CommonMark) for the API document and help. */
  readonly description?: string;
  /** The OpenAPI tag. */
  readonly tag: string;
  readonly input: InputSchema;
  /** The output's schema, for the document. */
  readonly output?: JsonSchema;
  /** The codes it refuses with, beside `invalid_input` (which every operation may answer). */
  readonly errors: readonly ErrorCode[];
  readonly http: HttpFace<O>;
  readonly cli: CliFace<O> | NotOnFace;
  run(mesh: Mesh, input: I, caller: Caller): Promise<O>;
}

/** An operation with its input type forgotten, as faces and the catalog hold it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any>;

/**
 * Declares an operation whose `run` input is typed from its input schema (inferred as a literal),
 * so the check and the type cannot drift apart.
 */
export function defineOperation<const S extends InputSchema, O>(
  op: Omit<Operation<InputOf<S>, O>, 'input'> & { readonly input: S },
): Operation<InputOf<S>, O> {
  return op;
}

/** The type of an input that passed schema `S`. */
export type InputOf<S> = S extends JSONSchema ? FromSchema<S> : never;

/** Runs an operation for a caller, after validating its input: the one way every face runs it. */
export async function invokeOperation<O>(
  mesh: Mesh,
  op: Operation<never, O> | AnyOperation,
  input: unknown,
  caller: Caller,
): Promise<O> {
  (await import('./validate-input.ts')).validateInput(op.input, input);
  return (op as AnyOperation).run(mesh, input, caller) as Promise<O>;
}

/**
 * A field's text, as a query parameter or a flag carries it, read as its schema types the field:
 * numbers from their digits, booleans from the words a face accepts; undefined when the text does
 * not read as that type (the face says so in its own way), any other type as the text itself.
 */
export function fieldFromText(
  text: string,
  schema: JsonSchema,
  booleans: Readonly<Record<string, boolean>>,
): unknown {
  if (schema['type'] === 'integer' || schema['type'] === 'number')
    return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : undefined;
  if (schema['type'] === 'boolean')
    return Object.hasOwn(booleans, text) ? booleans[text] : undefined;
  return text;
}
