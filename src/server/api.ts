import type { Route } from './api/context.ts';
import { streamRoutes } from './api/streams.ts';
import { operationRoutes } from './api/operations.ts';
import { metricsRoute, openApiRoute } from './api/meta.ts';

/** Every route of the JSON API, in the order the document lists them: one module per tag. */
export const apiRoutes: readonly Route[] = [
  openApiRoute(() => apiRoutes),
  metricsRoute,
  ...streamRoutes,
  ...operationRoutes,
];
