import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { Mesh } from '../app/mesh.ts';
import type { JsonSchema } from '../model/json.ts';
import { verifyOperatorToken } from '../app/operators/operator-auth.ts';
import type { OperatorTokenRecord } from '../app/records.ts';
import { actorOf } from './api/context.ts';
import type { FailureLimiter } from './failure-limit.ts';
import { apiRoutes } from './api.ts';
import { HttpError } from './http-error.ts';
import { readJson } from './http.ts';
import { JsonAnswer, RouteTable, routeNotFound } from './router.ts';
import type { StreamSlots } from './run-events.ts';
import { jsonResponse, originOf, type ServerEnv } from './server-env.ts';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Bearer operator tokens, verified by hash. Hono's bearer-auth answers a malformed header 400
 * with another challenge; Mesh answers every failure alike (401, one realm, a JSON refusal), so
 * a caller learns nothing from the shape of its mistake.
 */
function operatorToken(mesh: Mesh, failures: FailureLimiter): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    const presented = header ? BEARER.exec(header)?.[1] : undefined;
    const address = c.get('client').address;
    // A request that presents no token guesses nothing: only presented tokens are limited.
    if (header !== undefined) failures.check(address);
    const operator = presented ? await verifyOperatorToken(mesh.db, presented) : undefined;
    if (!operator) {
      if (header !== undefined) failures.fail(address);
      throw new HttpError(
        'unauthorized',
        presented
          ? 'the operator token is not valid'
          : 'an operator token is required: Authorization: Bearer <token>',
        { 'www-authenticate': 'Bearer realm="mesh"', connection: 'close' },
      );
    }
    c.set('operator', operator);
    c.set('actor', actorOf(operator));
    await next();
  };
}

/** Who calls over a socket whose owner-only file is the credential: its owner, as one principal. */
export interface SocketPrincipal {
  readonly operator: OperatorTokenRecord;
  readonly actor: string;
}

function socketOwner(principal: SocketPrincipal): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    c.set('operator', principal.operator);
    c.set('actor', principal.actor);
    await next();
  };
}

/** Whether a request came without a body (no length, or none, and not chunked). */
function sentNoBody(c: Context<ServerEnv>): boolean {
  const length = c.req.header('content-length');
  return (
    length === '0' || (length === undefined && c.req.header('transfer-encoding') === undefined)
  );
}

/** Whether a body schema requires any field. */
function requiresFields(schema: JsonSchema): boolean {
  const required = schema['required'];
  return Array.isArray(required) && required.length > 0;
}

/**
 * Serves the JSON API under /api: bearer tokens only, so no cookie ever authorises an API call
 * and CSRF cannot reach it. Every path under /api, served or not, needs the token first. On the
 * CLI's socket (`principal` given) the socket is the credential and every call is its owner's.
 */
export function mountApi(
  app: Hono<ServerEnv>,
  mesh: Mesh,
  version: string,
  failures: FailureLimiter,
  streams: StreamSlots,
  principal?: SocketPrincipal,
): void {
  const table = new RouteTable(apiRoutes);
  app.use('/api/*', principal ? socketOwner(principal) : operatorToken(mesh, failures));
  table.mount(app, async (route, params, c) => {
    let body: unknown;
    if (route.body) {
      // An action (a POST) whose fields are all optional may be sent without a body: `{}`.
      body =
        route.method === 'POST' && sentNoBody(c) && !requiresFields(route.body)
          ? {}
          : await readJson(c);
      table.validate(route, body);
    }
    const result = await route.handle({
      params,
      query: new URL(c.req.url).searchParams,
      body,
      context: {
        mesh,
        operator: c.get('operator'),
        actor: c.get('actor'),
        version,
        origin: principal ? undefined : originOf(c),
        streams,
        lastEventId: c.req.header('last-event-id'),
        prefer: c.req.header('prefer'),
      },
    });
    if (route.mediaType !== undefined && result instanceof Response) return result;
    if (result instanceof JsonAnswer)
      return jsonResponse(c, result.status, result.body, result.headers);
    return jsonResponse(c, route.status ?? 200, result);
  });
  app.all('/api/*', () => {
    throw routeNotFound();
  });
}
