import type { Db } from '../store/db.ts';
import type { Clock } from '../tool/clock.ts';
import type { ServiceFactory } from '../tool/context.ts';
import type { Redactor } from '../tool/redaction.ts';
import type { Workspaces } from '../tool/workspace.ts';
import type { Browsers } from '../tool/browser.ts';
import type { QueryProviderRuntime } from './backends/web-service.ts';

/*
 * What the services Mesh provides to packages are built on. Each service's module declares its
 * factory against these types; service-factories.ts lists the factories.
 */

/** What a service factory may build on: the platform's own parts, never a face. */
export interface ServiceHost {
  readonly db: Db;
  readonly clock: Clock;
  /** The execution layer's runtime: the run's workspace for workspace-class tools. */
  readonly workspaces?: Workspaces;
  /** The browser layer's runtime: the run's browser session for browser-class tools. */
  readonly browsers?: Browsers;
  /** The query providers behind the web verbs. */
  readonly web?: QueryProviderRuntime;
  /** Removes held secrets from what a service keeps of the outside world's answers. */
  readonly redactor?: Redactor;
}

/** A factory for one of the services Mesh provides to packages. */
export type MeshServiceFactory<T = unknown> = ServiceFactory<T, ServiceHost>;
