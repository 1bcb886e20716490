import type { Route } from './api/context.ts';
import { conversationRoutes } from './api/conversations.ts';
import { mcpRoutes } from './api/mcp.ts';
import { operationRoutes } from './api/operations.ts';
import { metricsRoute, openApiRoute } from './api/meta.ts';
import { packageRoutes, policyRoutes } from './api/packages.ts';

/** Every route of the JSON API, in the order the document lists them: one module per tag. */
export const apiRoutes: readonly Route[] = [
  openApiRoute(() => apiRoutes),
  metricsRoute,
  ...policyRoutes,
  ...conversationRoutes,
  ...operationRoutes,
  ...packageRoutes,
  ...mcpRoutes,
];
