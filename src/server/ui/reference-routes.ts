import { meshVersion } from '../../app/version.ts';
import { apiRoutes } from '../api.ts';
import { openApiDocument } from '../openapi.ts';
import { referencePage } from './reference-page.ts';
import type { UiRoute } from './ui-route.ts';

/** The API's own document, as the UI serves it (signed in by its session, not a bearer token). */
function document(): Record<string, unknown> {
  return openApiDocument(apiRoutes, { title: 'Mesh operator API', version: meshVersion() });
}

/** The API reference page, and its OpenAPI document for the signed-in browser. */
export const referenceRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/reference',
    handle: ({ session }) => Promise.resolve({ page: referencePage(session, document()) }),
  },
  {
    method: 'GET',
    path: '/reference/openapi.json',
    handle: () =>
      Promise.resolve({
        response: new Response(JSON.stringify(document(), null, 2), {
          headers: { 'content-type': 'application/json; charset=utf-8' },
        }),
      }),
  },
];
