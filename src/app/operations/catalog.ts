import { agentOperations } from '../agents/operations.ts';
import {
  addProviderOperation,
  deleteProviderOperation,
  listProvidersOperation,
  providerKeyOperation,
  webProviderKeyOperation,
  workspaceBackendKeyOperation,
  browserBackendKeyOperation,
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
  browserBackendKeyOperation,
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

/** A group of the command line: `mesh <name> <verb>` for each operation whose CLI face names it. */
export interface CliGroup {
  readonly name: string;
  /** The line `mesh --help` shows for it. */
  readonly summary: string;
}

/**
 * The command line's groups of operations, in the order `mesh --help` lists them. Which verbs a
 * group has, and their usage, come from the operations above; `test/app/operation-catalog.test.ts`
 * holds every operation's group to this list.
 */
export const cliGroups: readonly CliGroup[] = [
  { name: 'agents', summary: 'Create, show, update, list and delete agents; budgets and memories' },
  { name: 'providers', summary: 'Add, list and delete model providers; replace their keys' },
  {
    name: 'workspaces',
    summary: 'Register workspace backends, grant them to agents, list live workspaces',
  },
  {
    name: 'browsers',
    summary: 'Register browser backends, grant them to agents, list live browser sessions',
  },
  {
    name: 'web',
    summary: 'Register web search and reading providers, set their ceilings, grant them',
  },
  { name: 'runs', summary: 'List runs, show a run and its steps, answer its question' },
  { name: 'conversations', summary: "An agent's conversations and their messages" },
  { name: 'tools', summary: 'List, show, call, search, enable and validate tools' },
  { name: 'mcp', summary: 'Register remote MCP servers and connect agents to them' },
  {
    name: 'packages',
    summary: 'Tool packages as declared, and as installed for an agent; audience limits',
  },
  { name: 'config', summary: "Set and list an agent's tool config values" },
  { name: 'secrets', summary: "Capture an agent's credentials for tools (write-only)" },
  { name: 'tokens', summary: 'Create, list and revoke operator tokens' },
];
