import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  addToolProvider,
  agentConnections,
  catalogView,
  connectAgent,
  disconnectAgent,
  excludeTool,
  markLegacyQuery,
  recheckCatalog,
  reviewCatalog,
  setScopes,
} from '../app/mcp.ts';
import { withMesh } from '../app/mesh.ts';
import { requireAgent } from '../app/operator.ts';
import type { Audience } from '../store/conversations.ts';
import { listToolProviders } from '../store/mcp.ts';
import {
  commandGroup,
  printList,
  UsageError,
  type CliIo,
  type Command,
  type Subcommand,
} from './command.ts';

const USAGE = `Usage:
  mesh mcp add SLUG URL [--allow-loopback-http]
      register a remote MCP server (Streamable HTTP; https, or http to loopback in development);
      its tools are named SLUG__<tool>
  mesh mcp list [--agent A]                       providers, or an agent's connections
  mesh mcp connect --agent A --provider SLUG --token-file F
      connect the agent with its own account's bearer token (stored encrypted on the binding)
  mesh mcp catalog --agent A --provider SLUG [--refresh] [--json]
      the tools the agent's account sees, with fingerprints and what changed since the last review
  mesh mcp review --agent A --provider SLUG       mark the current catalog as reviewed
  mesh mcp exclude|include --agent A --provider SLUG TOOL
  mesh mcp legacy-query --agent A --provider SLUG TOOL [--off]
      keep query semantics for this exact definition (lost when its fingerprint changes)
  mesh mcp scope --agent A --provider SLUG [--audiences direct,shared|all] [--conversations ID,…|all]
  mesh mcp disconnect --agent A --provider SLUG   remove the binding and its token`;

const bindingOptions = {
  agent: { type: 'string' },
  provider: { type: 'string' },
} as const;

function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

const add: Subcommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { 'allow-loopback-http': { type: 'boolean', default: false } },
  });
  const [slug, url] = positionals;
  if (!slug || !url || positionals.length > 2) throw new UsageError('give SLUG and URL');
  return withMesh(async (mesh) => {
    const provider = await addToolProvider(mesh, {
      slug,
      url,
      allowLoopbackHttp: values['allow-loopback-http'],
    });
    io.out(`Added MCP provider ${provider.slug} (${provider.url}).`);
    return 0;
  });
};

const list: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  return withMesh(async (mesh) => {
    if (values.agent) {
      const agent = await requireAgent(mesh, values.agent);
      const rows = (await agentConnections(mesh, agent)).map((b) => ({
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
          `${r.provider}  ${r.url}  ${r.auth}${r.excluded.length ? `  excluded: ${r.excluded.join(', ')}` : ''}${r.catalog_error ? `  last check failed: ${r.catalog_error}` : ''}`,
      });
      return 0;
    }
    printList(io, {
      json: values.json,
      rows: await listToolProviders(mesh.db),
      toJson: (p) => ({ slug: p.slug, url: p.url, allow_loopback_http: p.allowLoopbackHttp }),
      empty: 'No MCP providers yet: mesh mcp add SLUG URL',
      line: (p) => `${p.slug}  ${p.url}`,
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
    token = readFileSync(file, 'utf8').trim();
  } catch {
    throw new UsageError(`cannot read the token file ${file}`);
  }
  return withMesh(async (mesh) => {
    const agent = await requireAgent(mesh, need(values.agent, '--agent'));
    const { check } = await connectAgent(mesh, agent, need(values.provider, '--provider'), token);
    io.out(
      `Connected ${agent.name} to ${values.provider}: ${check.added.length} tools (${check.pages} page${check.pages === 1 ? '' : 's'}${check.stoppedBecause ? `; stopped: ${check.stoppedBecause}` : ''}).`,
    );
    return 0;
  });
};

const catalog: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: {
      ...bindingOptions,
      refresh: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  return withMesh(async (mesh) => {
    const agent = await requireAgent(mesh, need(values.agent, '--agent'));
    const slug = need(values.provider, '--provider');
    if (values.refresh) await recheckCatalog(mesh, agent, slug);
    const view = await catalogView(mesh, agent, slug);
    if (values.json) {
      io.out(
        JSON.stringify(
          {
            provider: view.provider.slug,
            checked_at: view.binding.catalogCheckedAt,
            error: view.binding.catalogError,
            tools: view.tools.map((t) => ({
              tool: t.tool,
              name: t.name,
              fingerprint: t.fingerprint,
              previous_fingerprint: t.previousFingerprint,
              status: t.status,
              semantics: t.semantics,
              excluded: t.excluded,
              read_only_hint: t.readOnlyHint,
              changed_at: t.changedAt,
            })),
          },
          null,
          2,
        ),
      );
      return 0;
    }
    if (view.binding.catalogError) io.out(`last check failed: ${view.binding.catalogError}`);
    for (const t of view.tools)
      io.out(
        `${t.tool.padEnd(40)} ${t.status.padEnd(8)} ${t.semantics.padEnd(6)} ${t.fingerprint.slice(0, 16)}${t.excluded ? '  excluded' : ''}`,
      );
    if (view.tools.length === 0) io.out('No tools listed.');
    return 0;
  });
};

function bindingCommand(
  fn: (
    mesh: Parameters<Parameters<typeof withMesh>[0]>[0],
    agent: Awaited<ReturnType<typeof requireAgent>>,
    slug: string,
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
    return withMesh(async (mesh) => {
      const agent = await requireAgent(mesh, need(values.agent, '--agent'));
      return fn(mesh, agent, need(values.provider, '--provider'), positionals, values, io);
    });
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
export const mcpCommand: Command = commandGroup({
  name: 'mcp',
  summary: 'Register remote MCP servers and connect agents to them',
  usage: USAGE,
  subcommands: {
    add,
    list,
    connect,
    catalog,
    review: bindingCommand(async (mesh, agent, slug, _p, _v, io) => {
      await reviewCatalog(mesh, agent, slug);
      io.out(`Marked the ${slug} catalog of ${agent.name} as reviewed.`);
      return 0;
    }),
    exclude: bindingCommand(async (mesh, agent, slug, p, _v, io) => {
      await excludeTool(mesh, agent, slug, oneTool(p), true);
      io.out(`Excluded ${oneTool(p)} for ${agent.name}.`);
      return 0;
    }),
    include: bindingCommand(async (mesh, agent, slug, p, _v, io) => {
      await excludeTool(mesh, agent, slug, oneTool(p), false);
      io.out(`Included ${oneTool(p)} for ${agent.name}.`);
      return 0;
    }),
    'legacy-query': bindingCommand(
      async (mesh, agent, slug, p, v, io) => {
        await markLegacyQuery(mesh, agent, slug, oneTool(p), v['off'] !== true);
        io.out(
          `${oneTool(p)} ${v['off'] === true ? 'has effect semantics again' : 'keeps query semantics while its definition is unchanged'}.`,
        );
        return 0;
      },
      { off: { type: 'boolean' } },
    ),
    scope: bindingCommand(
      async (mesh, agent, slug, _p, v, io) => {
        const audiences = listOrAll(v['audiences'] as string | undefined);
        const conversations = listOrAll(v['conversations'] as string | undefined);
        if (audiences === undefined && conversations === undefined)
          throw new UsageError('give --audiences and/or --conversations');
        if (audiences?.some((a) => a !== 'direct' && a !== 'shared'))
          throw new UsageError('audiences are direct and shared');
        if (conversations?.some((c) => !/^[0-9a-f-]{36}$/i.test(c)))
          throw new UsageError('conversations are ids');
        await setScopes(mesh, agent, slug, {
          ...(audiences === undefined ? {} : { audiences: audiences as Audience[] | null }),
          ...(conversations === undefined ? {} : { conversationIds: conversations }),
        });
        io.out(`Set the scopes of ${agent.name}'s ${slug} connection.`);
        return 0;
      },
      { audiences: { type: 'string' }, conversations: { type: 'string' } },
    ),
    disconnect: bindingCommand(async (mesh, agent, slug, _p, _v, io) => {
      const removed = await disconnectAgent(mesh, agent, slug);
      io.out(
        removed
          ? `Disconnected ${agent.name} from ${slug}.`
          : `${agent.name} was not connected to ${slug}.`,
      );
      return 0;
    }),
  },
});
