import { cliGroups, operations, type CliGroup } from '../app/operations/catalog.ts';
import type { Command, Subcommand } from './command.ts';
import { cliFace, operationGroup, operationUsage } from './operation-command.ts';
import { SERVE_USAGE } from './serve-usage.ts';

/*
 * Every `mesh` subcommand's name, summary and usage, and how to load its body. The groups of
 * operations (`mesh agents …`, `mesh web …`) are the catalog's: their verbs and usage come from
 * the operations' CLI faces, their summaries from `cliGroups`. This module imports no command
 * body: `mesh --help` and `mesh help COMMAND` print from here alone, and a command's module (with
 * the database drivers, the MCP client or the turn engine behind it) is imported only when that
 * command runs.
 */

const CHAT_USAGE = `Usage:
  mesh chat --agent NAME [--conversation ID] [--as ACTOR] [--json] "text"

Sends a message to an agent and prints its reply. The message is persisted first, with its actor
(default: you, as user@host), and its run is created in the same transaction; the turn runs in
this process, or in the \`mesh serve\` that holds this home when one does. With --json, prints
run_id, status, reply and steps.`;

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

/** What a group has beside its operations: subcommands written by hand, with their usage. */
interface GroupExtras {
  readonly usage: string;
  load(): Promise<Readonly<Record<string, Subcommand>>>;
}

const EXTRAS: Readonly<Record<string, GroupExtras>> = {
  tools: {
    usage: `  mesh tools list [--json]                       every first-party tool: name, class, replay, needs, package
  mesh tools show NAME [--json]                  one tool in full, as its manifest declares it
  mesh tools validate [DIR]                      check tool packages on disk (default tools/)`,
    load: async () => (await import('./tools.ts')).toolSubcommands,
  },
  mcp: {
    usage: `  mesh mcp oauth --agent AGENT --provider PROVIDER --server URL [--wait SECONDS]
      Connect with OAuth: prints the authorization URL and waits until the authorization server
      has redirected back to the mesh serve at URL (or MESH_SERVER_URL) and the binding is made
      (mcp.oauth-start, then mcp.oauth-status until it is made or SECONDS pass; default 600)`,
    load: async () => (await import('./mcp.ts')).mcpSubcommands,
  },
  packages: {
    usage: `  mesh packages keygen NAME                      a publisher key pair: NAME.key (private) and NAME.pub
  mesh packages pack DIR --key KEYFILE [--out F] a signed archive of a package folder
  mesh packages verify ARCHIVE [--trust PUB]...  check an archive: hardening, digest, signature, manifest
  mesh packages stage ARCHIVE [--trust PUB]...   verify, then stage its files in $MESH_HOME/packages/<id>

Archives are metadata: their code is never loaded. Trusted keys are the *.pub files in
$MESH_HOME/trusted-keys/ and each --trust file. A refusal prints its typed reason and exits 1.`,
    load: async () => (await import('./package-archives.ts')).archiveSubcommands,
  },
};

/** The operations a group of the command line runs, in the catalog's order. */
function groupOperations(group: string) {
  return operations.filter((op) => cliFace(op)?.command[0] === group);
}

/** A group of operations as a command: its verbs, usage and summary from the catalog. */
function groupCommand(group: CliGroup): Command {
  const ops = groupOperations(group.name);
  const extras = EXTRAS[group.name];
  return {
    name: group.name,
    summary: group.summary,
    usage: [
      'Usage:',
      ...ops.map(operationUsage).filter(Boolean),
      ...(extras ? [extras.usage] : []),
    ].join('\n'),
    load: async () => operationGroup(ops, extras ? await extras.load() : {}),
  };
}

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
    name: 'chat',
    summary: 'Send a message to an agent and print its reply',
    usage: CHAT_USAGE,
    traced: true,
    load: async () => (await import('./chat.ts')).chatCommand,
  },
  ...cliGroups.map(groupCommand),
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
