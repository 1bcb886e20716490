import { readFileSync } from 'node:fs';
import { mcpCatalogOperation } from '../app/mcp-operations.ts';
import { operationSubcommand } from './operation-command.ts';
import { parseArgs } from 'node:util';
import type { Audience } from '../app/records.ts';
import { withUseCases, type UseCaseCall } from '../app/use-case-client.ts';
import {
  commandGroup,
  printList,
  UsageError,
  type CliIo,
  type CommandBody,
  type Subcommand,
} from './command.ts';

const bindingOptions = {
  agent: { type: 'string' },
  provider: { type: 'string' },
} as const;

function isoTime(at: Date | string | null): string {
  return at === null ? 'an unknown time' : new Date(at).toISOString();
}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

const add: Subcommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      'allow-loopback-http': { type: 'boolean', default: false },
      timeout: { type: 'string' },
    },
  });
  const [slug, url] = positionals;
  if (!slug || !url || positionals.length > 2) throw new UsageError('give SLUG and URL');
  const timeoutSeconds = values.timeout === undefined ? undefined : seconds(values.timeout);
  const provider = await withUseCases((call) =>
    call('mcp.add', {
      slug,
      url,
      allowLoopbackHttp: values['allow-loopback-http'],
      ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    }),
  );
  io.out(
    `Added MCP provider ${provider.slug} (${provider.url}; requests time out after ${provider.requestTimeoutMs / 1000} s).`,
  );
  return 0;
};

function seconds(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new UsageError('--timeout is a whole number of seconds');
  return Number(raw);
}

const timeout: Subcommand = async (args, io) => {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} });
  const [slug, raw] = positionals;
  if (!slug || !raw || positionals.length > 2) throw new UsageError('give SLUG and SECONDS');
  const provider = await withUseCases((call) =>
    call('mcp.timeout', { provider: slug, seconds: seconds(raw) }),
  );
  io.out(`Requests to ${provider.slug} now time out after ${provider.requestTimeoutMs / 1000} s.`);
  return 0;
};

const list: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  return withUseCases(async (call) => {
    if (values.agent) {
      const { agent, connections } = await call('mcp.connections', { agent: values.agent });
      const rows = connections.map((b) => ({
        provider: b.provider.slug,
        url: b.provider.url,
        auth: b.authKind,
        excluded: b.excludedTools,
        audiences: b.audiences,
        conversations: b.conversationIds,
        catalog_checked_at: b.catalogCheckedAt,
        catalog_error: b.catalogError,
      }));
      printList(io, {
        json: values.json,
        rows,
        empty: `${agent.name} has no MCP connections.`,
        line: (r) =>
          `${r.provider}  ${r.url}  ${r.auth}${r.excluded.length ? `  excluded: ${r.excluded.join(', ')}` : ''}${r.catalog_error ? `  last check failed at ${isoTime(r.catalog_checked_at)}: ${r.catalog_error}` : ''}`,
      });
      return 0;
    }
    printList(io, {
      json: values.json,
      rows: await call('mcp.providers', {}),
      toJson: (p) => ({
        slug: p.slug,
        url: p.url,
        allow_loopback_http: p.allowLoopbackHttp,
        timeout_seconds: p.requestTimeoutMs / 1000,
      }),
      empty: 'No MCP providers yet: mesh mcp add SLUG URL',
      line: (p) => `${p.slug}  ${p.url}  timeout ${p.requestTimeoutMs / 1000} s`,
    });
    return 0;
  });
};

const connect: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { ...bindingOptions, 'token-file': { type: 'string' } },
  });
  const file = need(values['token-file'], '--token-file');
  let token: string;
  try {
    // Read here, by the operator's process: a server given the work never opens the file.
    token = readFileSync(file, 'utf8').trim();
  } catch {
    throw new UsageError(`cannot read the token file ${file}`);
  }
  const agent = need(values.agent, '--agent');
  const provider = need(values.provider, '--provider');
  const {
    agent: connected,
    check,
    withheld,
  } = await withUseCases((call) => call('mcp.connect', { agent, provider, token }));
  const listed = check.added.length + check.changed.length;
  io.out(
    `Connected ${connected.name} to ${provider}: ${listed} tools, ${listed - withheld.length} usable (${check.pages} page${check.pages === 1 ? '' : 's'}${check.stoppedBecause ? `; stopped: ${check.stoppedBecause}` : ''}).`,
  );
  for (const w of withheld) io.out(`  withheld ${w.tool}: ${w.reason}`);
  return 0;
};

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
      ...bindingOptions,
      server: { type: 'string' },
      wait: { type: 'string' },
    },
  });
  const agent = need(values.agent, '--agent');
  const provider = need(values.provider, '--provider');
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
  const waitSeconds = values.wait === undefined ? OAUTH_WAIT_SECONDS : seconds(values.wait);
  return withUseCases(async (call) => {
    const started = await call('mcp.oauthStart', { agent, provider, origin });
    io.out(`Open this URL in a browser to authorize ${started.agent.name} on ${provider}:`);
    io.out(started.authorizationUrl);
    io.out(`Waiting for the authorization server to redirect back to ${origin} …`);
    const deadline = Date.now() + waitSeconds * 1000;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, OAUTH_POLL_MS));
      const status = await call('mcp.oauthStatus', { agent, provider });
      if (!status.pending && status.connected) {
        io.out(`Connected ${started.agent.name} to ${provider} with OAuth: ${status.tools} tools.`);
        return 0;
      }
    }
    io.err(
      `mesh mcp oauth: the authorization did not finish within ${waitSeconds} s; if it failed, the page the browser landed on says why`,
    );
    return 1;
  });
};

/**
 * A subcommand on one binding (--agent and --provider); `fn` gets the use-case call with both
 * already checked.
 */
function bindingCommand(
  fn: (
    call: UseCaseCall,
    binding: { agent: string; provider: string },
    positionals: string[],
    values: Record<string, string | boolean | undefined>,
    io: CliIo,
  ) => Promise<number>,
  extra: Record<string, { type: 'string' | 'boolean' }> = {},
): Subcommand {
  return async (args, io) => {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { ...bindingOptions, ...extra },
    });
    const binding = {
      agent: need(values.agent, '--agent'),
      provider: need(values.provider, '--provider'),
    };
    return withUseCases((call) => fn(call, binding, positionals, values, io));
  };
}

function oneTool(positionals: string[]): string {
  const [tool] = positionals;
  if (!tool || positionals.length > 1) throw new UsageError('name exactly one tool');
  return tool.includes('__') ? tool.slice(tool.indexOf('__') + 2) : tool;
}

function listOrAll(raw: string | undefined): string[] | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'all') return null;
  return raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** `mesh mcp …`: remote MCP servers and agents' connections to them. */
export const mcpCommand: CommandBody = commandGroup({
  add,
  remove: async (args, io) => {
    const { positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} });
    const slug = positionals[0];
    if (!slug || positionals.length > 1) throw new UsageError('name exactly one provider slug');
    await withUseCases((call) => call('mcp.remove', { provider: slug }));
    io.out(`Removed ${slug}.`);
    return 0;
  },
  list,
  timeout,
  connect,
  oauth,
  catalog: operationSubcommand(mcpCatalogOperation),
  review: bindingCommand(async (call, b, _p, _v, io) => {
    const { agent } = await call('mcp.review', b);
    io.out(`Marked the ${b.provider} catalog of ${agent.name} as reviewed.`);
    return 0;
  }),
  exclude: bindingCommand(async (call, b, p, _v, io) => {
    const tool = oneTool(p);
    const { agent } = await call('mcp.exclude', { ...b, tool, excluded: true });
    io.out(`Excluded ${tool} for ${agent.name}.`);
    return 0;
  }),
  include: bindingCommand(async (call, b, p, _v, io) => {
    const tool = oneTool(p);
    const { agent } = await call('mcp.exclude', { ...b, tool, excluded: false });
    io.out(`Included ${tool} for ${agent.name}.`);
    return 0;
  }),
  'legacy-query': bindingCommand(
    async (call, b, p, v, io) => {
      const tool = oneTool(p);
      await call('mcp.legacyQuery', { ...b, tool, on: v['off'] !== true });
      io.out(
        `${tool} ${v['off'] === true ? 'has effect semantics again' : 'keeps query semantics while its definition is unchanged'}.`,
      );
      return 0;
    },
    { off: { type: 'boolean' } },
  ),
  scope: bindingCommand(
    async (call, b, _p, v, io) => {
      const audiences = listOrAll(v['audiences'] as string | undefined);
      const conversations = listOrAll(v['conversations'] as string | undefined);
      if (audiences === undefined && conversations === undefined)
        throw new UsageError('give --audiences and/or --conversations');
      if (audiences?.some((a) => a !== 'direct' && a !== 'shared'))
        throw new UsageError('audiences are direct and shared');
      if (conversations?.some((c) => !/^[0-9a-f-]{36}$/i.test(c)))
        throw new UsageError('conversations are ids');
      const { agent } = await call('mcp.scope', {
        ...b,
        ...(audiences === undefined ? {} : { audiences: audiences as Audience[] | null }),
        ...(conversations === undefined ? {} : { conversationIds: conversations }),
      });
      io.out(`Set the scopes of ${agent.name}'s ${b.provider} connection.`);
      return 0;
    },
    { audiences: { type: 'string' }, conversations: { type: 'string' } },
  ),
  disconnect: bindingCommand(async (call, b, _p, _v, io) => {
    const { agent, removed } = await call('mcp.disconnect', b);
    io.out(
      removed
        ? `Disconnected ${agent.name} from ${b.provider}.`
        : `${agent.name} was not connected to ${b.provider}.`,
    );
    return 0;
  }),
});
