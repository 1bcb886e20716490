import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { withMesh, type Mesh } from '../app/mesh.ts';
import { agentConfig } from '../app/policy.ts';
import type { ConfigValue } from '../manifest/package-manifest.ts';
import { validateConfigValue } from '../policy/config-values.ts';
import { agentToolOwnerId } from '../secrets/secret-input.ts';
import { findAgent, type AgentRecord } from '../store/agents.ts';
import { setConfigValue, setToolEnabled } from '../store/tool-policy.ts';
import { MeshError } from '../tool/errors.ts';
import { commandGroup, UsageError, type CliIo, type Command, type Subcommand } from './command.ts';

async function withAgent(
  name: string | undefined,
  io: CliIo,
  fn: (mesh: Mesh, agent: AgentRecord) => Promise<number>,
): Promise<number> {
  if (!name) throw new UsageError('--agent is required');
  return withMesh(async (mesh) => {
    const agent = await findAgent(mesh.db, name);
    if (!agent) {
      io.err(`no agent named ${JSON.stringify(name)}`);
      return 1;
    }
    return await fn(mesh, agent);
  });
}

/** `mesh tools enable|disable NAME --agent A`: per-agent opt-outs of built-in tools. */
export function toolSwitch(enabled: boolean): Subcommand {
  return async (args, io) => {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { agent: { type: 'string' } },
    });
    const name = positionals[0];
    if (!name || positionals.length > 1) throw new UsageError('name exactly one tool');
    return withAgent(values.agent, io, async (mesh, agent) => {
      if (!mesh.catalog.registry.get(name)) {
        io.err(`no tool named ${JSON.stringify(name)}; see mesh tools list`);
        return 1;
      }
      await setToolEnabled(mesh.db, agent.id, name, enabled);
      io.out(`${name} is ${enabled ? 'enabled' : 'disabled'} for ${agent.name}.`);
      return 0;
    });
  };
}

function parseValue(type: string | undefined, raw: string): unknown {
  if (type === 'integer' || type === 'number') return raw.trim() === '' ? raw : Number(raw);
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

const CONFIG_USAGE = `Usage:
  mesh config set --agent A --package P KEY VALUE   set a config or public value (validated by the manifest)
  mesh config list --agent A [--json]               the agent's values, defaults filled in (never secrets)`;

const configSet: Subcommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { agent: { type: 'string' }, package: { type: 'string' } },
  });
  const [key, raw] = positionals;
  if (!values.package) throw new UsageError('--package is required');
  if (key === undefined || raw === undefined || positionals.length > 2)
    throw new UsageError('give KEY and VALUE');
  return withAgent(values.agent, io, async (mesh, agent) => {
    const pkg = mesh.catalog.packages.find((p) => p.manifest.package.id === values.package);
    const type = pkg?.manifest.config.find((f) => f.key === key)?.type;
    const { value } = validateConfigValue(
      mesh.catalog.packages,
      values.package ?? '',
      key,
      parseValue(type, raw),
    );
    await setConfigValue(mesh.db, agent.id, values.package ?? '', key, value satisfies ConfigValue);
    io.out(`Set ${values.package} ${key} for ${agent.name}.`);
    return 0;
  });
};

const configList: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  return withAgent(values.agent, io, async (mesh, agent) => {
    const configFor = await agentConfig(mesh, agent.id);
    const all = Object.fromEntries(
      mesh.catalog.packages.map((p) => [p.manifest.package.id, configFor(p.manifest.package.id)]),
    );
    if (values.json) io.out(JSON.stringify(all, null, 2));
    else
      for (const [id, v] of Object.entries(all))
        for (const [k, x] of Object.entries(v)) io.out(`${id} ${k} = ${JSON.stringify(x)}`);
    return 0;
  });
};

const SECRETS_USAGE = `Usage:
  mesh secrets set --agent A --package P --key K --value-file F
      capture the agent's own credential for a package's secret field (write-only: never printed)
  mesh secrets list --agent A [--json]      presence, kind, version and dates only`;

const secretsSet: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: {
      agent: { type: 'string' },
      package: { type: 'string' },
      key: { type: 'string' },
      'value-file': { type: 'string' },
    },
  });
  if (!values.package || !values.key || !values['value-file'])
    throw new UsageError('--package, --key and --value-file are required');
  let value: string;
  try {
    value = readFileSync(values['value-file'], 'utf8').trim();
  } catch {
    throw new UsageError(`cannot read the value file ${values['value-file']}`);
  }
  return withAgent(values.agent, io, async (mesh, agent) => {
    const pkg = mesh.catalog.packages.find((p) => p.manifest.package.id === values.package);
    const field = pkg?.manifest.config.find((f) => f.key === values.key);
    if (!pkg || !field || field.disposition !== 'secret') {
      throw new MeshError(
        'secret_field_unknown',
        `${values.package ?? '?'} declares no secret field ${JSON.stringify(values.key)}`,
      );
    }
    const meta = await mesh.secrets.capture({
      ownerType: 'agent_tool',
      ownerId: agentToolOwnerId(agent.id, pkg.manifest.package.id),
      kind: field.kind,
      value,
    });
    io.out(`Captured ${field.kind} for ${agent.name} (version ${meta.version}).`);
    return 0;
  });
};

const secretsList: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  return withAgent(values.agent, io, async (mesh, agent) => {
    const rows = [];
    for (const pkg of mesh.catalog.packages) {
      const held = await mesh.secrets.describe({
        ownerType: 'agent_tool',
        ownerId: agentToolOwnerId(agent.id, pkg.manifest.package.id),
      });
      for (const m of held)
        rows.push({
          package: pkg.manifest.package.id,
          kind: m.kind,
          version: m.version,
          created_at: m.createdAt,
        });
    }
    if (values.json) io.out(JSON.stringify(rows, null, 2));
    else if (rows.length === 0) io.out(`No secrets captured for ${agent.name}.`);
    else
      for (const r of rows)
        io.out(
          `${r.package} ${r.kind} present (version ${r.version}, ${r.created_at.toISOString()})`,
        );
    return 0;
  });
};

export const configCommand: Command = commandGroup({
  name: 'config',
  summary: "Set and list an agent's tool config values",
  usage: CONFIG_USAGE,
  subcommands: { set: configSet, list: configList },
});

export const secretsCommand: Command = commandGroup({
  name: 'secrets',
  summary: "Capture an agent's credentials for tools (write-only)",
  usage: SECRETS_USAGE,
  subcommands: { set: secretsSet, list: secretsList },
});
