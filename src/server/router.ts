import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonSchema } from '../model/json.ts';
import { HttpError } from './http.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What the router matches on: a method and a path template (`/api/agents/{agent}`). */
export interface RoutePattern {
  readonly method: Method;
  readonly path: string;
  /** The request body's JSON Schema, when the route reads a JSON body. */
  readonly body?: JsonSchema;
}

/** A route of the JSON API, declared as data so the OpenAPI document and tests read the same. */
export interface ApiRoute<C> extends RoutePattern {
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** The request body's JSON Schema; a body is read and validated only when this is set. */
  readonly body?: JsonSchema;
  /** Query parameters the route reads. */
  readonly query?: Readonly<Record<string, { description: string; schema: JsonSchema }>>;
  /** The success status (200 unless said). */
  readonly status?: 200 | 201 | 204;
  /** The success response's schema, for the document. */
  readonly response?: JsonSchema;
  handle(call: ApiCall<C>): Promise<unknown>;
}

/** What a route's handler gets: decoded path parameters, the query, the validated body. */
export interface ApiCall<C> {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly context: C;
}

interface Compiled<R> {
  readonly route: R;
  readonly segments: readonly (string | { param: string })[];
  readonly validate: ValidateFunction | undefined;
}

/** A path parameter is an id, a name or a slug: short, and never a slash. */
const MAX_PARAM = 200;

/** Says what was wrong with a body without quoting any value from it. */
export function describeSchemaError(e: ErrorObject): string {
  const at = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
  const where = at === '' ? 'the body' : `field \`${at}\``;
  const clip = (s: unknown) => String(s).slice(0, 64);
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown field \`${clip((e.params as { additionalProperty: string }).additionalProperty)}\`${at ? ` in ${at}` : ''}`;
    case 'required':
      return `missing field \`${[at, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.')}\``;
    case 'type':
      return `${where} must be ${(e.params as { type: string }).type}`;
    default:
      return `${where} ${e.message ?? 'is not valid'}`;
  }
}

/** Matches requests to routes and validates their bodies. */
export class Router<R extends RoutePattern> {
  private readonly compiled: Compiled<R>[];
  private readonly byRoute = new Map<R, Compiled<R>>();

  constructor(readonly routes: readonly R[]) {
    const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
    const seen = new Set<string>();
    this.compiled = routes.map((route) => {
      const key = `${route.method} ${route.path}`;
      if (seen.has(key)) throw new Error(`route ${key} is declared twice`);
      seen.add(key);
      const compiled: Compiled<R> = {
        route,
        segments: route.path
          .split('/')
          .slice(1)
          .map((s) => (/^\{\w+\}$/.test(s) ? { param: s.slice(1, -1) } : s)),
        validate: route.body ? ajv.compile(route.body) : undefined,
      };
      this.byRoute.set(route, compiled);
      return compiled;
    });
  }

  /** The route for a request, or a 404/405 refusal. */
  match(method: string, pathname: string): { route: R; params: Record<string, string> } {
    const parts = pathname.split('/').slice(1);
    let pathMatched = false;
    for (const compiled of this.compiled) {
      const params = matchSegments(compiled.segments, parts);
      if (!params) continue;
      pathMatched = true;
      if (compiled.route.method === method) return { route: compiled.route, params };
    }
    if (pathMatched) {
      const allowed = this.compiled
        .filter((c) => matchSegments(c.segments, parts))
        .map((c) => c.route.method);
      throw new HttpError(405, 'method_not_allowed', `this path accepts ${allowed.join(', ')}`, {
        allow: allowed.join(', '),
      });
    }
    throw new HttpError(404, 'route_not_found', 'nothing is served at this path');
  }

  /** Validates a body against its route's schema, naming the first problem. */
  validate(route: R, body: unknown): void {
    const validate = this.byRoute.get(route)?.validate;
    if (!validate || validate(body)) return;
    const first = validate.errors?.[0];
    throw new HttpError(
      400,
      'invalid_body',
      first ? describeSchemaError(first) : 'the body is not valid',
    );
  }
}

function matchSegments(
  segments: readonly (string | { param: string })[],
  parts: readonly string[],
): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const part = parts[i] ?? '';
    if (typeof segment === 'string') {
      if (segment !== part) return undefined;
      continue;
    }
    if (part === '') return undefined;
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    if (decoded.length > MAX_PARAM || decoded.includes('/')) return undefined;
    params[segment?.param ?? ''] = decoded;
  }
  return params;
}

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        field: { type: 'string' },
      },
    },
  },
};

/** The OpenAPI 3.1 document of a set of routes. */
export function openApiDocument(
  routes: readonly ApiRoute<unknown>[],
  info: { title: string; version: string },
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string', maxLength: MAX_PARAM },
    }));
    const query = Object.entries(route.query ?? {}).map(([name, q]) => ({
      name,
      in: 'query',
      required: false,
      description: q.description,
      schema: q.schema,
    }));
    const status = String(route.status ?? 200);
    const error = (description: string) => ({
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    });
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(params.length + query.length > 0 ? { parameters: [...params, ...query] } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: route.body } },
            },
          }
        : {}),
      responses: {
        [status]:
          status === '204'
            ? { description: 'Done; no content.' }
            : {
                description: 'Success.',
                content: { 'application/json': { schema: route.response ?? { type: 'object' } } },
              },
        ...(route.body
          ? { '400': error('The body was refused; the message names the field.') }
          : {}),
        '401': error('No operator token, or not a valid one.'),
        ...(params.length > 0 ? { '404': error('Something the path names does not exist.') } : {}),
        ...(route.body ? { '413': error('The body is larger than the server reads.') } : {}),
      },
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      ...info,
      description:
        'The Mesh operator API. Every route requires an operator token: `Authorization: Bearer <token>`. No response ever includes a secret value.',
    },
    security: [{ operatorToken: [] }],
    components: {
      securitySchemes: {
        operatorToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An operator token (mesh_op_…), created on first start or by `mesh tokens create`.',
        },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
