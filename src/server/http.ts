import type { Context, Env } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { httpStatusOf, retryAfterSeconds } from './error-status.ts';
import { isRetryableCode } from '../tool/error-codes.ts';
import { hasCode, isMeshError } from '../tool/errors.ts';
import { headersOf, HttpError } from './http-error.ts';
import { refuseUnstorableJson, refuseUnstorablePairs } from './input-text.ts';

/** Largest JSON request body the API reads (a secret value is at most 64 KiB). */
export const MAX_JSON_BODY = 256 * 1024;
/** Largest form body the UI reads. */
export const MAX_FORM_BODY = 256 * 1024;

function tooLarge(limit: number): HttpError {
  return new HttpError(
    'body_too_large',
    `the request body is larger than ${limit} bytes`,
    { connection: 'close' },
    { field: 'body' },
  );
}

/**
 * Reads a request body of media type `type` up to `limit` bytes, with `read`. A declared length
 * over the limit is refused before a byte is read; a body that grows past it is cut off. Either
 * way: 413, and the connection closes. Another media type is refused with `refusal` (415).
 */
export async function readBody<E extends Env, T>(
  c: Context<E, string>,
  limit: number,
  type: string,
  refusal: string,
  read: (req: Context<E, string>['req']) => Promise<T>,
): Promise<T> {
  const given = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (given !== type)
    throw new HttpError(
      'unsupported_media_type',
      refusal,
      {},
      {
        field: 'header.content-type',
      },
    );
  let body: T | undefined;
  await bodyLimit({
    maxSize: limit,
    onError: () => {
      throw tooLarge(limit);
    },
  })(c, async () => {
    body = await read(c.req);
  });
  return body as T;
}

/** A text body, read as {@link readBody} reads one. */
function readText<E extends Env>(
  c: Context<E, string>,
  limit: number,
  type: string,
  refusal: string,
): Promise<string> {
  return readBody(c, limit, type, refusal, (req) => req.text());
}

/**
 * Parses a JSON body; refuses a wrong content type, malformed JSON or a text that cannot be stored
 * (NUL, a lone surrogate) anywhere in it, without echoing it.
 */
export async function readJson<E extends Env>(
  c: Context<E, string>,
  limit = MAX_JSON_BODY,
): Promise<unknown> {
  const raw = await readText(c, limit, 'application/json', 'send the body as application/json');
  let body: unknown;
  try {
    body = JSON.parse(raw) as unknown;
  } catch {
    throw new HttpError(
      'invalid_json',
      'the request body is not valid JSON',
      {},
      {
        field: 'body',
      },
    );
  }
  refuseUnstorableJson(body);
  return body;
}

/** Parses an HTML form post (application/x-www-form-urlencoded); refuses unstorable texts. */
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
  const form = new URLSearchParams(raw);
  refuseUnstorablePairs(form, 'form');
  return form;
}

/** How an error is answered: its status, the JSON refusal and the headers it asks for. */
export interface ErrorAnswer {
  readonly status: number;
  readonly body: {
    error: {
      code: string;
      message: string;
      /** Whether the same request may succeed later (the cause is transient). */
      retryable: boolean;
      field?: string;
      /** The run a handed-over request goes on in: follow it rather than asking twice. */
      run_id?: string;
      request_id?: string;
    };
  };
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * An error as the API answers it: `{error: {code, message, retryable, field?}}`, with the status
 * of its code; a failure that may pass (503, 502 from a flaky vendor) says when to ask again in
 * `Retry-After`.
 * A failure of the server itself (status 500: a bug, a database error) is answered alike for
 * every cause, `internal_error` with the request's id and nothing of the error's own text, which
 * may quote the database or a value; the log line carries the id and the cause.
 */
export function errorResponse(error: unknown, requestId?: string): ErrorAnswer {
  const status = isMeshError(error) ? httpStatusOf(error.code) : 500;
  if (!isMeshError(error) || status === 500) {
    const ref = requestId ? ` (request ${requestId})` : '';
    return {
      status: 500,
      body: {
        error: {
          code: 'internal_error',
          message: `the server failed; see its log${ref}`,
          retryable: false,
          ...(requestId ? { request_id: requestId } : {}),
        },
      },
      headers: {},
    };
  }
  const named = error.data?.['key'] ?? error.data?.['field'];
  // A field is a name the caller sent (a config key from the path): shown printable and short.
  const field =
    typeof named === 'string' ? named.replace(/[^\x20-\x7e]/g, '?').slice(0, 200) : undefined;
  const runId = error.data?.['run_id'];
  const retryAfter = retryAfterSeconds(error.code);
  return {
    status,
    body: {
      error: {
        code: error.code,
        message: error.message,
        retryable: isRetryableCode(error.code),
        ...(typeof field === 'string' ? { field } : {}),
        ...(typeof runId === 'string' ? { run_id: runId } : {}),
      },
    },
    headers: {
      ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
      ...headersOf(error),
    },
  };
}

/** Whether an error is one this server expects to answer (not a bug to log with a stack). */
export function isExpected(error: unknown): boolean {
  return isMeshError(error) && !hasCode(error, 'database_error');
}
