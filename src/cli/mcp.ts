import { parseArgs } from 'node:util';
import {
  listConnectionsOperation,
  oauthStatusOperation,
  startOAuthOperation,
  type OAuthStatusAnswer,
} from '../app/mcp/connection-operations.ts';
import { listMcpProvidersOperation } from '../app/mcp/provider-operations.ts';
import { UsageError, type Subcommand } from './command.ts';
import { operationSubcommand } from './operation-command.ts';

/** How often `mesh mcp oauth` looks whether the authorization finished, and for how long. */
const OAUTH_POLL_MS = 1_000;
const OAUTH_WAIT_SECONDS = 600;

/**
 * `mesh mcp oauth`: starts an OAuth connection, prints the authorization URL for the operator's
 * browser, and waits until the authorization server has redirected back to the running server
 * (`--server`, the URL of `mesh serve`) and the binding is made.
 */
const oauth: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: {
      agent: { type: 'string' },
      provider: { type: 'string' },
      server: { type: 'string' },
      wait: { type: 'string' },
    },
  });
  const { agent, provider } = values;
  if (!agent) throw new UsageError('--agent is required');
  if (!provider) throw new UsageError('--provider is required');
  const server = values.server ?? process.env['MESH_SERVER_URL'];
  if (!server)
    throw new UsageError(
      'give --server URL (or MESH_SERVER_URL): the mesh serve the authorization server redirects back to',
    );
  let origin: string;
  try {
    origin = new URL(server).origin;
  } catch {
    throw new UsageError('--server is not a URL');
  }
  if (values.wait !== undefined && !/^\d+$/.test(values.wait))
    throw new UsageError('--wait is a whole number of seconds');
  const waitSeconds = values.wait === undefined ? OAUTH_WAIT_SECONDS : Number(values.wait);
  const { invokeFromCli } = await import('./operation-client.ts');
  const started = (await invokeFromCli(startOAuthOperation, { agent, provider, origin })) as {
    authorization_url: string;
  };
  io.out(`Open this URL in a browser to authorize ${agent} on ${provider}:`);
  io.out(started.authorization_url);
  io.out(`Waiting for the authorization server to redirect back to ${origin} …`);
  const deadline = Date.now() + waitSeconds * 1000;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, OAUTH_POLL_MS));
    const status = (await invokeFromCli(oauthStatusOperation, {
      agent,
      provider,
    })) as OAuthStatusAnswer;
    if (!status.pending && status.connected) {
      io.out(`Connected ${agent} to ${provider} with OAuth: ${status.tools} tools.`);
      return 0;
    }
  }
  io.err(
    `mesh mcp oauth: the authorization did not finish within ${waitSeconds} s; if it failed, the page the browser landed on says why`,
  );
  return 1;
};

const listProviders = operationSubcommand(listMcpProvidersOperation);
const listConnections = operationSubcommand(listConnectionsOperation);

/** What `mesh mcp` has beside its operations: connecting with OAuth, and `list --agent`. */
export const mcpSubcommands: Readonly<Record<string, Subcommand>> = {
  oauth,
  // `mesh mcp list --agent A` lists the agent's connections, as `mesh mcp connections` does.
  list: (args, io) =>
    args.some((a) => a === '--agent' || a.startsWith('--agent='))
      ? listConnections(args, io)
      : listProviders(args, io),
};
