import type { JsonSchema } from '../model/json.ts';
import { ERROR_CODES } from '../tool/error-codes.ts';
import { MAX_PARAM, type ApiRoute } from './router.ts';

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'retryable'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CODES).sort() },
        message: { type: 'string' },
        retryable: {
          type: 'boolean',
          description: 'Whether the same request may succeed later (see Retry-After)',
        },
        field: { type: 'string' },
        run_id: {
          type: 'string',
          description: 'The run a handed-over request goes on in: follow it, do not ask twice',
        },
        request_id: { type: 'string' },
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
      ...(route.description ? { description: route.description } : {}),
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
                content: {
                  [route.mediaType ?? 'application/json']: {
                    schema: route.response ?? { type: 'object' },
                  },
                },
              },
        ...(route.body
          ? { '400': error('The body was refused; the message names the field.') }
          : {}),
        '401': error('No operator token, or not a valid one.'),
        ...(params.length > 0 ? { '404': error('Something the path names does not exist.') } : {}),
        ...(route.body ? { '413': error('The body is larger than the server reads.') } : {}),
        ...(route.mediaType === 'text/event-stream'
          ? {
              '400': error('Last-Event-ID or a query parameter was refused; the field is named.'),
              '429': error('This server holds as many live streams as it allows; retry later.'),
            }
          : {}),
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
