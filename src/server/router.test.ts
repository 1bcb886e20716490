import { describe, expect, it } from 'vitest';
import { HttpError } from './http.ts';
import { Router, type RoutePattern } from './router.ts';

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

function refusal(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the router', () => {
  const router = new Router(routes);

  it('matches templates and decodes parameters', () => {
    expect(router.match('GET', '/api/agents/ada%20b').params).toEqual({ agent: 'ada b' });
    expect(router.match('PUT', '/api/agents/a/config/k').params).toEqual({ agent: 'a', key: 'k' });
  });

  it('refuses unknown paths, wrong methods, encoded slashes and overlong parameters', () => {
    expect(refusal(() => router.match('GET', '/api/nope')).status).toBe(404);
    const wrong = refusal(() => router.match('DELETE', '/api/agents'));
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('GET');
    expect(refusal(() => router.match('GET', '/api/agents/a%2Fb')).status).toBe(404);
    expect(refusal(() => router.match('GET', `/api/agents/${'x'.repeat(201)}`)).status).toBe(404);
    expect(refusal(() => router.match('GET', '/api/agents/%E0%A4%A')).status).toBe(404);
  });

  it('names what is wrong with a body, never a value', () => {
    const route = routes[2] as RoutePattern;
    const check = (body: unknown) => refusal(() => router.validate(route, body)).message;
    expect(check({ value: 'secret-ish' })).toBe('field `value` must be integer');
    expect(check({ value: 1, extra: 'secret-ish' })).toBe('unknown field `extra`');
    expect(check({})).toBe('missing field `value`');
    expect(check({ value: 1, nested: { n: 5 } })).toBe('field `nested.n` must be string');
    expect(check([1])).toBe('the body must be object');
    expect(() => router.validate(route, { value: 3 })).not.toThrow();
  });

  it('refuses a route declared twice', () => {
    expect(() => new Router([routes[0] as RoutePattern, routes[0] as RoutePattern])).toThrow(
      'declared twice',
    );
  });
});
