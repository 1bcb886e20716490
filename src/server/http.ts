import type { Context, Env } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { httpStatusOf } from '../tool/error-codes.ts';
import { hasCode, isMeshError, MeshError } from '../tool/errors.ts';

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
  ) {
    super(code, message);
    this[HEADERS] = headers;
  }
}

/** The headers a refusal asks to be answered with (none for errors that are not HttpErrors). */
function headersOf(error: MeshError): Readonly<Record<string, string>> {
  const headers = (error as unknown as Record<symbol, unknown>)[HEADERS];
  return typeof headers === 'object' && headers !== null ? (headers as Record<string, string>) : {};
}

/** Largest JSON request body the API reads (a secret value is at most 64 KiB). */
export const MAX_JSON_BODY = 256 * 1024;
/** Largest form body the UI reads. */
export const MAX_FORM_BODY = 256 * 1024;

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'body_too_large', `the request body is larger than ${limit} bytes`, {
    connection: 'close',
  });
}

/**
 * Reads a request body up to `limit` bytes. A declared length over the limit is refused before a
 * byte is read; a body that grows past it is cut off. Either way: 413, and the connection closes.
 */
async function readText<E extends Env>(
  c: Context<E, string>,
  limit: number,
  type: string,
  refusal: string,
) {
  const given = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (given !== type) throw new HttpError(415, 'unsupported_media_type', refusal);
  let text = '';
  await bodyLimit({
    maxSize: limit,
    onError: () => {
      throw tooLarge(limit);
    },
  })(c, async () => {
    text = await c.req.text();
  });
  return text;
}

/** Parses a JSON body; refuses a wrong content type or malformed JSON without echoing it. */
export async function readJson<E extends Env>(
  c: Context<E, string>,
  limit = MAX_JSON_BODY,
): Promise<unknown> {
  const raw = await readText(c, limit, 'application/json', 'send the body as application/json');
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new HttpError(400, 'invalid_json', 'the request body is not valid JSON');
  }
}

/** Parses an HTML form post (application/x-www-form-urlencoded). */
export async function readForm<E extends Env>(
  c: Context<E, string>,
  limit = MAX_FORM_BODY,
): Promise<URLSearchParams> {
  const raw = await readText(
    c,
    limit,
    'application/x-www-form-urlencoded',
    'forms are posted url-encoded',
  );
  return new URLSearchParams(raw);
}

/** An error as the API answers it: `{error: {code, message}}`, with the status of its code. */
export function errorResponse(error: unknown): {
  status: number;
  body: { error: { code: string; message: string; field?: string } };
  headers: Readonly<Record<string, string>>;
} {
  if (isMeshError(error)) {
    const field = error.data?.['key'] ?? error.data?.['field'];
    return {
      status: httpStatusOf(error.code),
      body: {
        error: {
          code: error.code,
          message: error.message,
          ...(typeof field === 'string' ? { field } : {}),
        },
      },
      headers: headersOf(error),
    };
  }
  return {
    status: 500,
    body: { error: { code: 'internal_error', message: 'the server failed; see its log' } },
    headers: {},
  };
}

/** Whether an error is one this server expects to answer (not a bug to log with a stack). */
export function isExpected(error: unknown): boolean {
  return isMeshError(error) && !hasCode(error, 'database_error');
}
