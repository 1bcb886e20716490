import type { JsonObject } from '../model/json.ts';
import type { ErrorCode } from '../tool/error-codes.ts';
import { MeshError } from '../tool/errors.ts';

const HEADERS = Symbol.for('mesh.http-error.headers');

/**
 * A refusal by the HTTP face itself (before any use case ran): a Mesh error with a stable code,
 * a value-free message and the headers the answer carries. Its status is its code's, from the
 * table (`error-status.ts`): a refusal names what went wrong, and the table says how that is
 * answered.
 */
export class HttpError extends MeshError {
  readonly [HEADERS]: Readonly<Record<string, string>>;
  constructor(
    code: ErrorCode,
    message: string,
    headers: Readonly<Record<string, string>> = {},
    data?: JsonObject,
  ) {
    super(code, message, data);
    this[HEADERS] = headers;
  }
}

/** The headers a refusal asks to be answered with (none for errors that are not HttpErrors). */
export function headersOf(error: MeshError): Readonly<Record<string, string>> {
  const headers = (error as unknown as Record<symbol, unknown>)[HEADERS];
  return typeof headers === 'object' && headers !== null ? (headers as Record<string, string>) : {};
}
