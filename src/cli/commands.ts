import { agentOperations } from '../app/agents/operations.ts';
import { tokenOperations } from '../app/operators/token-operations.ts';
import { secretOperations } from '../app/packages/secret-operations.ts';
import { configOperations } from '../app/packages/config-operations.ts';
import { installOperations } from '../app/packages/install-operations.ts';
import { packageOperations, setToolEnabledOperation } from '../app/packages/package-operations.ts';
import {
  providerOperations,
  webProviderKeyOperation,
  workspaceBackendKeyOperation,
} from '../app/backends/operations.ts';
import { mcpCatalogOperations } from '../app/mcp/catalog-operations.ts';
import { mcpConnectionOperations } from '../app/mcp/connection-operations.ts';
import { mcpProviderOperations } from '../app/mcp/provider-operations.ts';
import { runOperations } from '../app/runs/operations.ts';
import { conversationOperations } from '../app/conversations/operations.ts';
import {
  agentToolsOperation,
  callToolOperation,
  searchToolsOperation,
} from '../app/packages/tool-operations.ts';
import type { Command } from './command.ts';
import { operationUsage } from './operation-command.ts';
import { webOperations } from '../app/backends/web-operations.ts';
import { workspaceOperations } from '../app/backends/workspace-operations.ts';
import { browserOperations } from '../app/backends/browser-operations.ts';
import { SERVE_USAGE } from './serve-usage.ts';

/*
 * Every `mesh` subcommand's name, summary and usage, and how to load its body. This module imports
 * no command body: `mesh --help` and `mesh help COMMAND` print from here alone, and a command's
 * module (with the database drivers, the MCP client or the turn engine behind it) is imported only
 * when that command runs.
 */

const AGENTS_USAGE = `Usage:
${agentOperations.map(operationUsage).join('\n')}`;

const WORKSPACES_USAGE = `Usage:
${workspaceOperations.map(operationUsage).join('\n')}
${operationUsage(workspaceBackendKeyOperation)}`;

const BROWSERS_USAGE = `Usage:
${browserOperations.map(operationUsage).join('\n')}`;

const WEB_USAGE = `Usage:
${webOperations.map(operationUsage).join('\n')}
${operationUsage(webProviderKeyOperation)}`;

const PROVIDERS_USAGE = `Usage:
${providerOperations.map(operationUsage).join('\n')}`;

const CHAT_USAGE = `Usage:
  mesh chat --agent NAME [--conversation ID] [--as ACTOR] [--json] "text"

Sends a message to an agent and prints its reply. The message is persisted first, with its actor
(default: you, as user@host), and its run is created in the same transaction; the turn runs in
this process, or in the \`mesh serve\` that holds this home when one does. With --json, prints
run_id, status, reply and steps.`;

const RUNS_USAGE = `Usage:
${runOperations.map(operationUsage).filter(Boolean).join('\n')}`;

const CONVERSATIONS_USAGE = `Usage:
${conversationOperations.map(operationUsage).filter(Boolean).join('\n')}`;

const TOOLS_USAGE = `Usage:
  mesh tools list [--json]                       every first-party tool: name, class, replay, needs, package
  mesh tools show NAME [--json]                  one tool in full, as its manifest declares it
${operationUsage(agentToolsOperation)}
${operationUsage(callToolOperation)}
${operationUsage(searchToolsOperation)}
${operationUsage(setToolEnabledOperation)}
  mesh tools validate [DIR]                      check tool packages on disk (default tools/)`;

const MCP_USAGE = `Usage:
${mcpProviderOperations.map(operationUsage).join('\n')}
${mcpCatalogOperations.map(operationUsage).join('\n')}
${mcpConnectionOperations.map(operationUsage).filter(Boolean).join('\n')}
  mesh mcp oauth --agent AGENT --provider PROVIDER --server URL [--wait SECONDS]
      Connect with OAuth: prints the authorization URL and waits until the authorization server
      has redirected back to the mesh serve at URL (or MESH_SERVER_URL) and the binding is made
      (mcp.oauth-start, then mcp.oauth-status until it is made or SECONDS pass; default 600)`;

const PACKAGES_USAGE = `Usage:
${packageOperations.map(operationUsage).join('\n')}
${installOperations.map(operationUsage).join('\n')}
  mesh packages keygen NAME                      a publisher key pair: NAME.key (private) and NAME.pub
  mesh packages pack DIR --key KEYFILE [--out F] a signed archive of a package folder
  mesh packages verify ARCHIVE [--trust PUB]...  check an archive: hardening, digest, signature, manifest
  mesh packages stage ARCHIVE [--trust PUB]...   verify, then stage its files in $MESH_HOME/packages/<id>

Archives are metadata: their code is never loaded. Trusted keys are the *.pub files in
$MESH_HOME/trusted-keys/ and each --trust file. A refusal prints its typed reason and exits 1.`;

const CONFIG_USAGE = `Usage:
${configOperations.map(operationUsage).join('\n')}`;

const SECRETS_USAGE = `Usage:
${secretOperations.map(operationUsage).join('\n')}`;

const TOKENS_USAGE = `Usage:
${tokenOperations.map(operationUsage).join('\n')}`;

const KEYS_USAGE = `Usage: mesh keys rotate --new-key-file F

Rotates the deployment's instance key (MESH_INSTANCE_KEY_FILE, or $MESH_HOME/instance.key) to the
key in F (32 raw bytes, mode 0600): every secret's data key is re-wrapped in this process, in
batches. Interrupted, run it again with the same files and it continues. Then restart every
replica with MESH_INSTANCE_KEY_FILE=F. Stop mesh serve first on the embedded database.`;

const MIGRATE_USAGE = `Usage: mesh migrate

Applies the numbered migrations this Mesh ships, in order, each in its own transaction, under
an advisory lock (safe while other replicas start). Uses DATABASE_URL when set, otherwise the
embedded database in $MESH_HOME (default ./.mesh); while a mesh serve holds that one, it says so
(the server applied its migrations when it started).`;

/** Every subcommand, in the order `mesh --help` lists them. */
export const commands: readonly Command[] = [
  {
    name: 'serve',
    summary: 'Serve the web UI and JSON API, and drive runs',
    usage: SERVE_USAGE,
    traced: true,
    load: async () => (await import('./serve.ts')).serveCommand,
  },
  {
    name: 'agents',
    summary: 'Create, list and delete agents',
    usage: AGENTS_USAGE,
    load: async () => (await import('./agents.ts')).agentsCommand,
  },
  {
    name: 'providers',
    summary: 'Add, list and delete model providers',
    usage: PROVIDERS_USAGE,
    load: async () => (await import('./providers.ts')).providersCommand,
  },
  {
    name: 'workspaces',
    summary: 'Register workspace backends, grant them to agents, list live workspaces',
    usage: WORKSPACES_USAGE,
    load: async () => (await import('./workspaces.ts')).workspacesCommand,
  },
  {
    name: 'browsers',
    summary: 'Register browser backends, grant them to agents, list live browser sessions',
    usage: BROWSERS_USAGE,
    load: async () => (await import('./browsers.ts')).browsersCommand,
  },
  {
    name: 'web',
    summary: 'Register web search and reading providers, set their ceilings, grant them',
    usage: WEB_USAGE,
    load: async () => (await import('./web.ts')).webCommand,
  },
  {
    name: 'chat',
    summary: 'Send a message to an agent and print its reply',
    usage: CHAT_USAGE,
    traced: true,
    load: async () => (await import('./chat.ts')).chatCommand,
  },
  {
    name: 'runs',
    summary: 'List runs, and show a run and its steps',
    usage: RUNS_USAGE,
    load: async () => (await import('./runs.ts')).runsCommand,
  },
  {
    name: 'conversations',
    summary: "An agent's conversations and their messages",
    usage: CONVERSATIONS_USAGE,
    load: async () => (await import('./chat.ts')).conversationsCommand,
  },
  {
    name: 'tools',
    summary: 'List, show, call, search and validate tools',
    usage: TOOLS_USAGE,
    load: async () => (await import('./tools.ts')).toolsCommand,
  },
  {
    name: 'mcp',
    summary: 'Register remote MCP servers and connect agents to them',
    usage: MCP_USAGE,
    load: async () => (await import('./mcp.ts')).mcpCommand,
  },
  {
    name: 'packages',
    summary: 'Tool packages as declared, and as installed for an agent; audience limits',
    usage: PACKAGES_USAGE,
    load: async () => (await import('./policy.ts')).packagesCommand,
  },
  {
    name: 'config',
    summary: "Set and list an agent's tool config values",
    usage: CONFIG_USAGE,
    load: async () => (await import('./policy.ts')).configCommand,
  },
  {
    name: 'secrets',
    summary: "Capture an agent's credentials for tools (write-only)",
    usage: SECRETS_USAGE,
    load: async () => (await import('./policy.ts')).secretsCommand,
  },
  {
    name: 'tokens',
    summary: 'Create, list and revoke operator tokens',
    usage: TOKENS_USAGE,
    load: async () => (await import('./tokens.ts')).tokensCommand,
  },
  {
    name: 'keys',
    summary: "Rotate the deployment's instance key",
    usage: KEYS_USAGE,
    load: async () => (await import('./keys.ts')).keysCommand,
  },
  {
    name: 'migrate',
    summary: 'Apply pending database migrations',
    usage: MIGRATE_USAGE,
    load: async () => (await import('./migrate.ts')).migrateCommand,
  },
];
