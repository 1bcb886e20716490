import { agentOperations } from '../agents/operations.ts';
import {
  addProviderOperation,
  deleteProviderOperation,
  listProvidersOperation,
  providerKeyOperation,
  webProviderKeyOperation,
  workspaceBackendKeyOperation,
} from '../backends/operations.ts';
import { webOperations } from '../backends/web-operations.ts';
import { workspaceOperations } from '../backends/workspace-operations.ts';
import { browserOperations } from '../backends/browser-operations.ts';
import { mcpCatalogOperations } from '../mcp/catalog-operations.ts';
import { mcpConnectionOperations } from '../mcp/connection-operations.ts';
import { mcpProviderOperations } from '../mcp/provider-operations.ts';
import { conversationOperations } from '../conversations/operations.ts';
import { runOperations } from '../runs/operations.ts';
import {
  agentToolsOperation,
  callToolOperation,
  searchToolsOperation,
} from '../packages/tool-operations.ts';
import { configOperations } from '../packages/config-operations.ts';
import { installOperations } from '../packages/install-operations.ts';
import { packageOperations, setToolEnabledOperation } from '../packages/package-operations.ts';
import { secretOperations } from '../packages/secret-operations.ts';
import { tokenOperations } from '../operators/token-operations.ts';
import type { AnyOperation } from './operation.ts';

/**
 * Every operation declared in the catalog, in the order the API document and help list them.
 * The faces are generated from this list; `test/app/operation-catalog.test.ts` walks it.
 */
export const operations: readonly AnyOperation[] = [
  ...agentOperations,
  agentToolsOperation,
  callToolOperation,
  searchToolsOperation,
  setToolEnabledOperation,
  ...conversationOperations,
  ...runOperations,
  ...mcpProviderOperations,
  ...mcpCatalogOperations,
  ...mcpConnectionOperations,
  addProviderOperation,
  listProvidersOperation,
  deleteProviderOperation,
  providerKeyOperation,
  ...webOperations,
  webProviderKeyOperation,
  ...workspaceOperations,
  workspaceBackendKeyOperation,
  ...browserOperations,
  ...tokenOperations,
  ...secretOperations,
  ...configOperations,
  ...packageOperations,
  ...installOperations,
];

/** The operation of that name, if the catalog holds one. */
export function operationNamed(name: string): AnyOperation | undefined {
  return operations.find((op) => op.name === name);
}
