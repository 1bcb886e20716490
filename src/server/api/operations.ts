import { operations } from '../../app/operations/catalog.ts';
import { httpLayout } from '../../app/operations/http-layout.ts';
import { InvalidInputError } from '../../app/operations/input.ts';
import {
  fieldFromText,
  invokeOperation,
  type AnyOperation,
} from '../../app/operations/operation.ts';
import type { JsonSchema } from '../../model/json.ts';
import { MeshError } from '../../tool/errors.ts';
import { JsonAnswer } from '../router.ts';
import { route, type Route } from './context.ts';

/*
 * The HTTP face of the operation catalog: each operation's route and OpenAPI entry, generated
 * from its declaration. Path parameters are input fields of the same name; a GET or DELETE reads
 * the other fields from the query, any other method from the JSON body (but for fields declared
 * as query parameters). The operation validates the assembled input; a refusal names where the
 * field came from (`path.agent`, `query.status`, `body.model`).
 */

/** The words a query parameter says a boolean with. */
const QUERY_BOOLEANS = { true: true, false: false };

/** The camelCase operationId of `runs.list`: `runsList`. */
export function operationId(name: string): string {
  return name.replace(/[._-](\w)/g, (_, c: string) => c.toUpperCase());
}

/** The seconds an RFC 7240 `Prefer: wait=N` asks for (a malformed preference is ignored). */
function preferredWait(prefer: string | undefined): number | undefined {
  for (const preference of (prefer ?? '').split(',')) {
    const match = /^\s*wait\s*=\s*"?([0-9]{1,9})"?\s*(;.*)?$/i.exec(preference);
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** The route that serves one operation. */
export function operationRoute(op: AnyOperation): Route {
  const { inPath, inQuery, inBody } = httpLayout(op);
  const where = (field: string) =>
    inPath.includes(field) ? 'path' : inQuery.includes(field) ? 'query' : 'body';
  const bodySchema = {
    type: 'object',
    additionalProperties: false,
    required: op.input.required.filter((k) => inBody.includes(k)),
    properties: Object.fromEntries(inBody.map((k) => [k, op.input.properties[k]])),
  } as const;
  const hasBody = op.http.method !== 'GET' && op.http.method !== 'DELETE';
  return route({
    method: op.http.method,
    path: op.http.path,
    operationId: operationId(op.name),
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tag: op.tag,
    ...(op.http.status ? { status: op.http.status } : {}),
    ...(op.output ? { response: op.output } : {}),
    ...(inQuery.length > 0
      ? {
          query: Object.fromEntries(
            inQuery.map((k) => {
              const schema = op.input.properties[k] ?? { description: k };
              return [k, { description: schema.description, schema }];
            }),
          ),
        }
      : {}),
    ...(hasBody && inBody.length > 0 ? { body: bodySchema as JsonSchema } : {}),
    handle: async ({ context, params, query, body }) => {
      const input: Record<string, unknown> = {};
      for (const k of inPath) input[k] = params[k];
      for (const k of query.keys()) {
        if (!inQuery.includes(k))
          throw new MeshError('invalid_query', `unknown query parameter \`${k.slice(0, 64)}\``, {
            field: `query.${k.slice(0, 64)}`,
          });
      }
      for (const k of inQuery) {
        const text = query.get(k);
        if (text !== null) {
          // Text that does not read as the field's type is left for validation to refuse.
          const schema = op.input.properties[k] ?? {};
          input[k] = fieldFromText(text, schema, QUERY_BOOLEANS) ?? text;
        }
      }
      if (typeof body === 'object' && body !== null) Object.assign(input, body);
      // A hint, not a demand: a longer wait is cut to the field's bound, and the answer says so.
      const preferField = op.http.preferWait;
      let applied: string | undefined;
      if (preferField !== undefined && input[preferField] === undefined) {
        const asked = preferredWait(context.prefer);
        if (asked !== undefined) {
          const most = op.input.properties[preferField]?.['maximum'];
          const seconds = typeof most === 'number' ? Math.min(asked, most) : asked;
          input[preferField] = seconds;
          applied = `wait=${seconds}`;
        }
      }
      let output: unknown;
      try {
        output = await invokeOperation(context.mesh, op, input, {
          actor: context.actor,
          relay: context.operator.kind === 'relay',
          ...(context.origin === undefined ? {} : { origin: context.origin }),
        });
      } catch (error) {
        // The operation names fields under `input`; the caller sent them in a path, query or body.
        if (error instanceof InvalidInputError && error.field.startsWith('input.')) {
          const field = error.field.slice('input.'.length);
          const said = `${where(field.split('.')[0] ?? '')}.${field}`;
          throw new InvalidInputError(
            error.message.replaceAll(`\`${error.field}\``, `\`${said}\``),
            said,
          );
        }
        throw error;
      }
      const answer = op.http.answer?.(output);
      if (answer === undefined && applied === undefined) return output;
      return new JsonAnswer(answer?.status ?? (op.http.status === 201 ? 201 : 200), output, {
        ...answer?.headers,
        ...(applied === undefined ? {} : { 'preference-applied': applied }),
      });
    },
  });
}

/** Every operation of the catalog as a route. */
export const operationRoutes: readonly Route[] = operations.map(operationRoute);
