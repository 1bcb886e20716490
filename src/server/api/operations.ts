import { operations } from '../../app/operations/catalog.ts';
import { httpLayout } from '../../app/operations/http-layout.ts';
import {
  fieldFromText,
  InvalidInputError,
  invokeOperation,
  type AnyOperation,
} from '../../app/operations/operation.ts';
import type { JsonSchema } from '../../model/json.ts';
import { MeshError } from '../../tool/errors.ts';
import { route, type Route } from './context.ts';

/*
 * The HTTP face of the operation catalog: each operation's route and OpenAPI entry, generated
 * from its declaration. Path parameters are input fields of the same name; a GET or DELETE reads
 * the other fields from the query, any other method from the JSON body. The operation validates
 * the assembled input; a refusal names where the field came from (`path.agent`, `query.status`,
 * `body.model`).
 */

/** The words a query parameter says a boolean with. */
const QUERY_BOOLEANS = { true: true, false: false };

/** The camelCase operationId of `runs.list`: `runsList`. */
function operationId(name: string): string {
  return name.replace(/[._-](\w)/g, (_, c: string) => c.toUpperCase());
}

/** The route that serves one operation. */
export function operationRoute(op: AnyOperation): Route {
  const { inPath, inQuery, rest } = httpLayout(op);
  const where = (field: string) => (inPath.includes(field) ? 'path' : inQuery ? 'query' : 'body');
  const restSchema = {
    type: 'object',
    additionalProperties: false,
    required: op.input.required.filter((k) => rest.includes(k)),
    properties: Object.fromEntries(rest.map((k) => [k, op.input.properties[k]])),
  } as const;
  return route({
    method: op.http.method,
    path: op.http.path,
    operationId: operationId(op.name),
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tag: op.tag,
    ...(op.http.status ? { status: op.http.status } : {}),
    ...(op.output ? { response: op.output } : {}),
    ...(inQuery
      ? {
          query: Object.fromEntries(
            rest.map((k) => {
              const schema = op.input.properties[k] ?? { description: k };
              return [k, { description: schema.description, schema }];
            }),
          ),
        }
      : rest.length > 0
        ? { body: restSchema as JsonSchema }
        : {}),
    handle: async ({ context, params, query, body }) => {
      const input: Record<string, unknown> = {};
      for (const k of inPath) input[k] = params[k];
      if (inQuery) {
        for (const k of query.keys()) {
          if (!rest.includes(k))
            throw new MeshError('invalid_query', `unknown query parameter \`${k.slice(0, 64)}\``, {
              field: `query.${k.slice(0, 64)}`,
            });
        }
        for (const k of rest) {
          const text = query.get(k);
          if (text !== null) {
            // Text that does not read as the field's type is left for validation to refuse.
            const schema = op.input.properties[k] ?? {};
            input[k] = fieldFromText(text, schema, QUERY_BOOLEANS) ?? text;
          }
        }
      } else if (typeof body === 'object' && body !== null) Object.assign(input, body);
      try {
        const output: unknown = await invokeOperation(context.mesh, op, input, {
          actor: context.actor,
        });
        return output;
      } catch (error) {
        // The operation names fields under `input`; the caller sent them in a path, query or body.
        if (error instanceof InvalidInputError && error.field.startsWith('input.')) {
          const field = error.field.slice('input.'.length);
          throw new InvalidInputError(
            error.message,
            `${where(field.split('.')[0] ?? '')}.${field}`,
          );
        }
        throw error;
      }
    },
  });
}

/** Every operation of the catalog as a route. */
export const operationRoutes: readonly Route[] = operations.map(operationRoute);
