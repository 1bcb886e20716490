import { workspaceBackendKeyOperation } from '../app/backends/operations.ts';
import { workspaceOperations } from '../app/backends/workspace-operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh workspaces …`: where agents' code runs, who may use it, and what is running now. */
export const workspacesCommand: CommandBody = operationGroup([
  ...workspaceOperations,
  workspaceBackendKeyOperation,
]);
