import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Context, Env, Hono } from 'hono';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { JsonSchema } from '../model/json.ts';
import { HttpError } from './http-error.ts';
import { describeSchemaError, nestingRefusal, schemaErrorField } from '../tool/schema-errors.ts';
import { refuseUnstorablePairs } from './input-text.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route is served at: a method and a path template (`/api/agents/{agent}`). */
export interface RoutePattern {
  readonly method: Method;
  readonly path: string;
  /** The request body's JSON Schema, when the route reads a JSON body. */
  readonly body?: JsonSchema;
}

/** A route of the JSON API, declared as data so the OpenAPI document and tests read the same. */
export interface ApiRoute<C, B = unknown> extends RoutePattern {
  readonly operationId: string;
  readonly summary: string;
  /** A longer account for the document (CommonMark), when the summary is not enough. */
  readonly description?: string;
  readonly tag: string;
  /** The request body's JSON Schema; a body is read and validated only when this is set. */
  readonly body?: JsonSchema;
  /** Query parameters the route reads. */
  readonly query?: Readonly<Record<string, { description: string; schema: JsonSchema }>>;
  /** The success status (200 unless said; a handler may answer another with {@link JsonAnswer}). */
  readonly status?: 200 | 201 | 202 | 204;
  /** The success response's schema, for the document. */
  readonly response?: JsonSchema;
  /**
   * The success response's media type when it is not JSON: the handler then answers with a
   * `Response` of its own (bytes, with their headers).
   */
  readonly mediaType?: string;
  handle(call: ApiCall<C, B>): Promise<unknown>;
}

/** A JSON answer whose status (and headers) the handler chooses, e.g. 200 or 202 by outcome. */
export class JsonAnswer {
  constructor(
    readonly status: 200 | 201 | 202,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/** What a route's handler gets: decoded path parameters, the query, the validated body. */
export interface ApiCall<C, B = unknown> {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly body: B;
  readonly context: C;
}

/** The type of a body that passed `S`, or `undefined` for a route without a body schema. */
export type BodyOf<S> = S extends JSONSchema ? FromSchema<S> : undefined;

/**
 * Declares an API route whose handler's body is typed from the schema that validates it. The
 * schema is inferred as a literal (`const`), so the type and the check cannot drift apart.
 */
export function apiRoute<C>() {
  return <const S extends JsonSchema | undefined = undefined>(
    route: Omit<ApiRoute<C, BodyOf<S>>, 'body'> & { readonly body?: S },
  ): ApiRoute<C> => route;
}

/** A closed object schema: unknown fields are refused, naming them. */
export function closedObject<
  const P extends Readonly<Record<string, JsonSchema>>,
  const R extends readonly (keyof P & string)[] = [],
>(properties: P, required: R = [] as unknown as R) {
  return { type: 'object', additionalProperties: false, required, properties } as const;
}

/** A path parameter is an id, a name or a slug: short, and never a slash. */
export const MAX_PARAM = 200;

/**
 * The parameters of a request path under a template, decoded strictly: a segment that is not
 * valid percent-encoding, decodes to a slash or is longer than {@link MAX_PARAM} matches nothing,
 * and static segments are compared as sent. Hono routes on a leniently decoded path; this is
 * the stricter reading every handler gets.
 */
export function decodeParams(
  template: string,
  rawPath: string,
): Record<string, string> | undefined {
  const segments = template.split('/').slice(1);
  const parts = rawPath.split('/').slice(1);
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const part = parts[i] ?? '';
    const param = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (param === undefined) {
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
    params[param] = decoded;
  }
  return params;
}

/** The path of a request as it was sent (still percent-encoded). */
export function rawPathOf(c: Context): string {
  return new URL(c.req.url).pathname;
}

/** `/api/agents/{agent}` as Hono writes it: `/api/agents/:agent`. */
function honoPath(template: string): string {
  return template.replace(/\{(\w+)\}/g, ':$1');
}

/** A route table: its routes served on a Hono app, each body checked against its schema. */
export class RouteTable<R extends RoutePattern> {
  private readonly validators = new Map<R, ValidateFunction>();

  constructor(readonly routes: readonly R[]) {
    const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
    const seen = new Set<string>();
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      if (seen.has(key)) throw new Error(`route ${key} is declared twice`);
      seen.add(key);
      if (route.body) this.validators.set(route, ajv.compile(route.body));
    }
  }

  /**
   * Serves every route on `app`. A path that a route serves with another method is refused 405
   * with `Allow`; a path whose parameters do not decode strictly is refused 404.
   */
  mount<E extends Env>(
    app: Hono<E>,
    serve: (route: R, params: Record<string, string>, c: Context<E, string>) => Promise<Response>,
  ): void {
    const methods = new Map<string, Method[]>();
    for (const route of this.routes) {
      app.on(route.method, honoPath(route.path), (c) =>
        serve(route, paramsOrRefuse(route.path, c), c),
      );
      methods.set(route.path, [...(methods.get(route.path) ?? []), route.method]);
    }
    for (const [path, allowed] of methods) {
      app.all(honoPath(path), (c) => {
        paramsOrRefuse(path, c);
        const allow = allowed.join(', ');
        throw new HttpError('method_not_allowed', `this path accepts ${allow}`, { allow });
      });
    }
  }

  /** Validates a body against its route's schema, naming the first problem. */
  validate(route: R, body: unknown): void {
    const tooDeep = nestingRefusal(body, 'body');
    if (tooDeep) throw new HttpError('invalid_body', tooDeep.message, {}, { field: tooDeep.field });
    const validate = this.validators.get(route);
    if (!validate || validate(body)) return;
    const first = validate.errors?.[0];
    throw new HttpError(
      'invalid_body',
      first ? describeSchemaError(first) : 'the body is not valid',
      {},
      { field: first ? schemaErrorField(first) : 'body' },
    );
  }
}

/** The refusal for a path nothing is served at. */
export function routeNotFound(): HttpError {
  return new HttpError('route_not_found', 'nothing is served at this path');
}

/**
 * The strictly decoded parameters of a request to a route, or a refusal: 404 when they do not
 * decode, 400 naming the parameter (`path.agent`) or query parameter (`query.limit`) that holds a
 * text no database stores.
 */
function paramsOrRefuse(template: string, c: Context): Record<string, string> {
  const params = decodeParams(template, rawPathOf(c));
  if (!params) throw routeNotFound();
  refuseUnstorablePairs(Object.entries(params), 'path');
  refuseUnstorablePairs(new URL(c.req.url).searchParams, 'query');
  return params;
}
