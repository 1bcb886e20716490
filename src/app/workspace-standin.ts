import { WORKSPACES, WorkspaceUnavailableError, type Workspaces } from '../tool/workspace.ts';
import type { MeshServiceFactory } from './service-factories.ts';

/**
 * STAND-IN, to be replaced by the real workspace service (src/exec): provides `mesh.workspace`
 * so that a Mesh with the mesh.github package starts (a compiled-in tool whose service no factory
 * provides stops start-up), and answers every call as "no backend". Tools that need a workspace
 * are withheld at offer time anyway while no backend is configured.
 */
export const workspaceStandInService: MeshServiceFactory<Workspaces> = {
  key: WORKSPACES,
  create: () => ({
    forCall: () =>
      Promise.reject(
        new WorkspaceUnavailableError(
          'no_backend',
          'this Mesh has no workspace service yet: no execution backend can be granted',
        ),
      ),
  }),
};
