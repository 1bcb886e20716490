import { openApiDocument } from '../openapi.ts';
import { route, type Route } from './context.ts';

/**
 * The route that describes the API. It is handed the full route list rather than importing it,
 * so the list can include this route without an import cycle.
 */
export function openApiRoute(routes: () => readonly Route[]): Route {
  return route({
    method: 'GET',
    path: '/api/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This API, described as an OpenAPI 3.1 document',
    tag: 'meta',
    handle: async ({ context }) =>
      openApiDocument(routes(), { title: 'Mesh operator API', version: context.version }),
  });
}
