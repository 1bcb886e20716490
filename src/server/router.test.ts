import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { hasCode, isMeshError } from '../tool/errors.ts';
import { errorResponse } from './http.ts';
import { decodeParams, RouteTable, type RoutePattern } from './router.ts';

const routes: RoutePattern[] = [
  { method: 'GET', path: '/api/agents' },
  { method: 'GET', path: '/api/agents/{agent}' },
  {
    method: 'PUT',
    path: '/api/agents/{agent}/config/{key}',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['value'],
      properties: {
        value: { type: 'integer' },
        nested: { type: 'object', properties: { n: { type: 'string' } } },
      },
    },
  },
];

/** The table served on a Hono app that answers each route with its decoded parameters. */
function served(table: RouteTable<RoutePattern>): Hono {
  const app = new Hono();
  table.mount(app, async (_route, params, c) => c.json(params));
  app.onError((error, c) => {
    const { status, body, headers } = errorResponse(error);
    return c.json(body, status as 404, headers);
  });
  return app;
}

function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    if (isMeshError(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the route table', () => {
  const table = new RouteTable(routes);
  const app = served(table);

  it('matches templates and decodes parameters', async () => {
    expect(await (await app.request('/api/agents/ada%20b')).json()).toEqual({ agent: 'ada b' });
    const put = await app.request('/api/agents/a/config/k', { method: 'PUT' });
    expect(await put.json()).toEqual({ agent: 'a', key: 'k' });
  });

  it('refuses unknown paths, wrong methods, encoded slashes and overlong parameters', async () => {
    const status = async (path: string, method = 'GET') =>
      (await app.request(path, { method })).status;
    expect(await status('/api/nope')).toBe(404);
    const wrong = await app.request('/api/agents', { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect(await wrong.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
    expect(await status('/api/agents/a%2Fb')).toBe(404);
    expect(await status('/api/agents/a%2Fb', 'DELETE')).toBe(404);
    expect(await status(`/api/agents/${'x'.repeat(201)}`)).toBe(404);
    expect(await status('/api/agents/%E0%A4%A')).toBe(404);
    expect(await status('/api/%61gents')).toBe(404);
  });

  it('decodes parameters strictly, comparing static segments as sent', () => {
    expect(decodeParams('/a/{x}/b', '/a/%C3%A9/b')).toEqual({ x: 'é' });
    expect(decodeParams('/a/{x}/b', '/a//b')).toBeUndefined();
    expect(decodeParams('/a/{x}/b', '/a/x/b/')).toBeUndefined();
    expect(decodeParams('/a/{x}', '/%61/x')).toBeUndefined();
  });

  it('names what is wrong with a body, never a value', () => {
    const route = routes[2] as RoutePattern;
    const check = (body: unknown) => refusal(() => table.validate(route, body)).message;
    expect(check({ value: 'secret-ish' })).toBe('field `value` must be integer');
    expect(check({ value: 1, extra: 'secret-ish' })).toBe('unknown field `extra`');
    expect(check({})).toBe('missing field `value`');
    expect(check({ value: 1, nested: { n: 5 } })).toBe('field `nested.n` must be string');
    expect(check([1])).toBe('the body must be object');
    expect(
      hasCode(
        refusal(() => table.validate(route, {})),
        'invalid_body',
      ),
    ).toBe(true);
    expect(() => table.validate(route, { value: 3 })).not.toThrow();
  });

  it('refuses a route declared twice', () => {
    expect(() => new RouteTable([routes[0] as RoutePattern, routes[0] as RoutePattern])).toThrow(
      'declared twice',
    );
  });
});
