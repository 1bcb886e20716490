import type { JsonObject, JsonValue } from '../model/json.ts';
import type { ErrorCode } from './error-codes.ts';

const BRAND = Symbol.for('mesh.error');

/**
 * The one base of Mesh's errors. Each carries a stable `code`; callers match on the code (see
 * {@link hasCode}), never on `instanceof`, which breaks across module copies.
 */
export class MeshError extends Error {
  readonly [BRAND] = true;
  readonly code: ErrorCode;
  readonly data: JsonObject | undefined;

  constructor(code: ErrorCode, message: string, data?: JsonObject, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.data = data;
    this.name = new.target.name;
  }

  /** A raw Error stringifies to `{}`; this is what gets persisted and shown instead. */
  toJSON(): SerializedError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** How an error is persisted in a step or shown to a model: never a raw Error. */
export interface SerializedError {
  readonly code: string;
  readonly message: string;
  readonly data?: JsonObject;
}

/**
 * The arguments were wrong in a way the model can fix. Any tool class may raise it; the executor
 * turns it into an observation the model sees on its next completion.
 */
export class InvalidToolInputError extends MeshError {
  static readonly code = 'invalid_tool_input';
  constructor(message: string, data?: JsonObject) {
    super(InvalidToolInputError.code, message, data);
  }
}

/**
 * The capability is unreachable right now. Only honoured for query tools: an effect that throws
 * "unavailable" may already have acted, so for every other class it stays fatal.
 */
export class ToolUnavailableError extends MeshError {
  static readonly code = 'tool_unavailable';
  constructor(message: string, data?: JsonObject) {
    super(ToolUnavailableError.code, message, data);
  }
}

/**
 * A name the caller gave (an agent, package, tool or key), quoted for a message when it looks like
 * a name; anything else (control characters, a long text) is said as "that name", never echoed.
 */
export function quoteName(name: string, instead = 'that name'): string {
  return /^[A-Za-z0-9_.:@-]{1,100}$/.test(name) ? JSON.stringify(name) : instead;
}

/** True when `error` is a Mesh error (from any copy of this module). */
export function isMeshError(error: unknown): error is MeshError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[BRAND] === true
  );
}

/** True when `error` is a Mesh error with this stable code. */
export function hasCode(error: unknown, code: ErrorCode): error is MeshError {
  return isMeshError(error) && error.code === code;
}

/**
 * Serializes any thrown value as `{code, message, data}`. Foreign errors keep their message and
 * name; their stack and properties are dropped because they may hold argument values or secrets.
 */
export function serializeError(error: unknown): SerializedError {
  if (isMeshError(error)) return error.toJSON();
  if (error instanceof Error) {
    const data: Record<string, JsonValue> = { name: error.name };
    return { code: 'internal_error', message: error.message, data };
  }
  return { code: 'internal_error', message: `non-error value thrown (${typeof error})` };
}
