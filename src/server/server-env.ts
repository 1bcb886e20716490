import type { Context } from 'hono';
import type { OperatorTokenRecord } from '../app/records.ts';
import type { ClientOrigin } from './client-address.ts';
import type { Flash, UiCall } from './ui/ui-route.ts';

/** What one signed-in page request carries once its session and CSRF token were checked. */
export interface PageRequest {
  readonly sessionId: string;
  readonly session: UiCall['session'];
  /** The posted form (empty for a GET). */
  readonly form: URLSearchParams;
  /** The notice shown on this page, if one was waiting. */
  readonly flash: Flash | undefined;
}

/** The Hono environment of the Mesh server: what middleware hands on to handlers. */
export type ServerEnv = {
  Variables: {
    /** This request's id: in the log line of a failure and in a 500's answer. */
    requestId: string;
    /** Where the request came from, through the trusted proxies. */
    client: ClientOrigin;
    /** The operator whose bearer token an API call presented. */
    operator: OperatorTokenRecord;
    /** Who an API call acts as, for message actors and audit records. */
    actor: string;
    /** The signed-in UI request (set by the session check). */
    page: PageRequest;
  };
};

/**
 * This server's origin as the request reached it (for URLs other sites send browsers back to):
 * https when the request came over https, directly or through a trusted proxy.
 */
export function originOf(c: Context<ServerEnv>): string {
  const proto = c.get('client').https ? 'https' : 'http';
  return `${proto}://${c.req.header('host') ?? 'localhost'}`;
}

/** A JSON answer, as every API response is written. */
export function jsonResponse(
  c: Context,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Response {
  if (status === 204) return c.body(null, 204, { ...headers });
  return c.body(JSON.stringify(body), status as 200, {
    'content-type': 'application/json; charset=utf-8',
    ...headers,
  });
}

/** An HTML page, as every UI page is written. */
export function htmlResponse(
  c: Context,
  status: number,
  page: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return c.body(page, status as 200, { 'content-type': 'text/html; charset=utf-8', ...headers });
}
