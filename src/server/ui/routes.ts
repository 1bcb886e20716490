import { agentRoutes } from './agent-routes.ts';
import { browserRoutes } from './browser-routes.ts';
import { chatRoutes } from './chat-routes.ts';
import { liveViewRoutes } from './live-view-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { providerRoutes } from './provider-routes.ts';
import { referenceRoutes } from './reference-routes.ts';
import type { UiRoute } from './ui-route.ts';
import { webRoutes } from './web-routes.ts';
import { workspaceRoutes } from './workspace-routes.ts';

/** Every page and form handler of the web UI (login and assets are served before these). */
export const uiRoutes: readonly UiRoute[] = [
  ...agentRoutes,
  ...chatRoutes,
  ...providerRoutes,
  ...mcpRoutes,
  ...workspaceRoutes,
  ...browserRoutes,
  ...webRoutes,
  ...referenceRoutes,
  ...liveViewRoutes,
];
