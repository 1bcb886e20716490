import { declaredServices, lazyServices, serviceKey, type Services } from '../tool/context.ts';
import { MeshError } from '../tool/errors.ts';
import type { Registry } from '../tool/registry.ts';
import { WORKSPACES, type Workspaces } from '../tool/workspace.ts';
import { BROWSERS, type Browsers } from '../tool/browser.ts';
import { WEB_READ, WEB_SEARCH, type WebRead, type WebSearch } from '../../tools/web/web-service.ts';
import { conversationSearchService } from './conversations/search.ts';
import { memoryStoreService } from './agents/memory-service.ts';
import { commitmentsService } from './agents/commitments.ts';
import { progressService, toolSearchService } from './agents/own-verb-services.ts';
import { outboxService } from './runs/outbound-service.ts';
import type { QueryProviderRuntime } from './backends/web-service.ts';
import type { MeshServiceFactory, ServiceHost } from './service-host.ts';

function webRuntime(host: ServiceHost): QueryProviderRuntime {
  if (!host.web) throw new Error('this runtime has no query providers');
  return host.web;
}

/**
 * Every service Mesh provides to packages. A package names what it uses in its tools' `needs`
 * (`service:<id>`), so adding a package that uses an existing service edits nothing here or in
 * the composition root; adding a new kind of service is one row in this list.
 */
export const SERVICE_FACTORIES: readonly MeshServiceFactory[] = [
  memoryStoreService,
  outboxService,
  {
    key: WORKSPACES,
    create(host: ServiceHost): Workspaces {
      if (!host.workspaces) throw new Error('this runtime has no execution layer');
      return host.workspaces;
    },
  },
  {
    key: BROWSERS,
    create(host: ServiceHost): Browsers {
      if (!host.browsers) throw new Error('this runtime has no browser layer');
      return host.browsers;
    },
  },
  { key: WEB_SEARCH, create: (host: ServiceHost): WebSearch => webRuntime(host) },
  { key: WEB_READ, create: (host: ServiceHost): WebRead => webRuntime(host) },
  conversationSearchService,
  progressService,
  toolSearchService,
  commitmentsService,
];

/**
 * The services handlers get, each built on first use. Refuses to start when a compiled-in tool
 * declares a service no factory provides: that is a build mistake, better found at start-up than
 * as a withheld tool.
 */
export function packageServices(
  catalog: { readonly registry: Registry },
  host: ServiceHost,
  factories: readonly MeshServiceFactory[] = SERVICE_FACTORIES,
): Services {
  const provided = lazyServices(factories, host);
  for (const d of catalog.registry.definitions()) {
    for (const id of declaredServices(d.needs)) {
      if (!provided.has(serviceKey(id)))
        throw new MeshError(
          'service_unprovided',
          `tool ${d.tool.name} of package ${d.origin.packageId} needs service ${id}, which this Mesh does not provide`,
        );
    }
  }
  return provided;
}
