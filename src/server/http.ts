import type { IncomingMessage, ServerResponse } from 'node:http';
import { hasCode, isMeshError } from '../tool/errors.ts';

/** A refusal with an HTTP status, a stable code and a message that never carries a value. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Largest JSON request body the API reads (a secret value is at most 64 KiB). */
export const MAX_JSON_BODY = 256 * 1024;
/** Largest form body the UI reads. */
export const MAX_FORM_BODY = 256 * 1024;

/** Headers every response carries. */
const BASE_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** The pages' policy: our own stylesheet and script only, forms post only to us, no framing. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "script-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = status === 204 ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...BASE_HEADERS,
    ...(status === 204 ? {} : { 'content-type': 'application/json; charset=utf-8' }),
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'content-length': String(Buffer.byteLength(html)),
    ...headers,
  });
  res.end(html);
}

export function sendAsset(res: ServerResponse, contentType: string, body: string): void {
  res.writeHead(200, {
    ...BASE_HEADERS,
    'cache-control': 'public, max-age=300',
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

/** A 303 to a path on this server (after a form post, or to the login page). */
export function redirect(
  res: ServerResponse,
  location: string,
  headers: Readonly<Record<string, string | string[]>> = {},
): void {
  res.writeHead(303, { ...BASE_HEADERS, location, 'content-length': '0', ...headers });
  res.end();
}

/**
 * Reads a request body up to `limit` bytes. A declared length over the limit is refused before a
 * byte is read; a body that grows past it is cut off. Either way: 413, and the connection closes.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'body_too_large', `the request body is larger than ${limit} bytes`, {
    connection: 'close',
  });
}

/** Parses a JSON body; refuses a wrong content type or malformed JSON without echoing it. */
export async function readJson(req: IncomingMessage, limit = MAX_JSON_BODY): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    throw new HttpError(415, 'unsupported_media_type', 'send the body as application/json');
  const raw = await readBody(req, limit);
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'invalid_json', 'the request body is not valid JSON');
  }
}

/** Parses an HTML form post (application/x-www-form-urlencoded). */
export async function readForm(
  req: IncomingMessage,
  limit = MAX_FORM_BODY,
): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new HttpError(415, 'unsupported_media_type', 'forms are posted url-encoded');
  const raw = await readBody(req, limit);
  return new URLSearchParams(raw.toString('utf8'));
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/** Which HTTP status a Mesh refusal maps to, by its stable code. */
export function statusForCode(code: string): number {
  if (code.endsWith('_not_found')) return 404;
  if (code.endsWith('_exists')) return 409;
  if (code === 'model_call_failed' || code === 'mcp_transport_failed' || code === 'mcp_error')
    return 502;
  if (code === 'egress_refused' || code === 'invalid_tool_provider' || code === 'invalid_token')
    return 400;
  if (CLIENT_ERRORS.has(code) || code.startsWith('secret_') || code.startsWith('invalid_')) {
    return code === 'secret_undecryptable' || code === 'secret_key_mismatch' ? 500 : 400;
  }
  if (CONFLICTS.has(code)) return 409;
  return 500;
}

const CLIENT_ERRORS = new Set([
  'config_invalid',
  'empty_message',
  'message_too_long',
  'missing_actor',
  'invalid_json',
]);
const CONFLICTS = new Set(['agent_has_no_model', 'provider_key_missing', 'provider_unsupported']);

/** An error as the API answers it: `{error: {code, message}}`, with a status from its code. */
export function errorResponse(error: unknown): {
  status: number;
  body: { error: { code: string; message: string; field?: string } };
  headers: Readonly<Record<string, string>>;
} {
  if (error instanceof HttpError) {
    return {
      status: error.status,
      body: { error: { code: error.code, message: error.message } },
      headers: error.headers,
    };
  }
  if (isMeshError(error)) {
    const field = error.data?.['key'] ?? error.data?.['field'];
    return {
      status: statusForCode(error.code),
      body: {
        error: {
          code: error.code,
          message: error.message,
          ...(typeof field === 'string' ? { field } : {}),
        },
      },
      headers: {},
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
  return error instanceof HttpError || (isMeshError(error) && !hasCode(error, 'database_error'));
}
