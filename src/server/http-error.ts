import type { JsonObject } from '../model/json.ts';
import { MeshError } from '../tool/errors.ts';

const HEADERS = Symbol.for('mesh.http-error.headers');

/**
 * A refusal by the HTTP face itself (before any use case ran): a Mesh error with a stable code,
 * a value-free message and the headers the answer carries. The status it is thrown with is the
 * one the error-code table gives its code (`error-codes.test.ts` holds the two together); the
 * answer's status always comes from the table.
 */
export class HttpError extends MeshError {
  readonly [HEADERS]: Readonly<Record<string, string>>;
  constructor(
    readonly status: number,
    code: string,
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
