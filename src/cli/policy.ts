import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { withMesh, type Mesh } from '../app/mesh.ts';
import {
  agentPackages,
  captureAgentSecret,
  configValueFromText,
  requireAgent,
  setAgentConfig,
  setAgentToolEnabled,
} from '../app/operator.ts';
import { agentConfig } from '../app/policy.ts';
import type { AgentRecord } from '../store/agents.ts';
import { commandGroup, printList, UsageError, type Command, type Subcommand } from './command.ts';

async function withAgent(
  name: string | undefined,
  fn: (mesh: Mesh, agent: AgentRecord) => Promise<number>,
): Promise<number> {
  if (!name) throw new UsageError('--agent is required');
  return withMesh(async (mesh) => fn(mesh, await requireAgent(mesh, name)));
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
    return withAgent(values.agent, async (mesh, agent) => {
      await setAgentToolEnabled(mesh, agent, name, enabled);
      io.out(`${name} is ${enabled ? 'enabled' : 'disabled'} for ${agent.name}.`);
      return 0;
    });
  };
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
  return withAgent(values.agent, async (mesh, agent) => {
    const packageId = values.package ?? '';
    await setAgentConfig(
      mesh,
      agent,
      packageId,
      key,
      configValueFromText(mesh, packageId, key, raw),
    );
    io.out(`Set ${values.package} ${key} for ${agent.name}.`);
    return 0;
  });
};

const configList: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  return withAgent(values.agent, async (mesh, agent) => {
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
  return withAgent(values.agent, async (mesh, agent) => {
    const meta = await captureAgentSecret(
      mesh,
      agent,
      values.package ?? '',
      values.key ?? '',
      value,
    );
    io.out(`Captured ${meta.kind} for ${agent.name} (version ${meta.version}).`);
    return 0;
  });
};

const secretsList: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  return withAgent(values.agent, async (mesh, agent) => {
    const rows = (await agentPackages(mesh, agent)).flatMap((pkg) =>
      pkg.config.flatMap((field) => {
        const slot = pkg.secrets[field.key];
        return slot?.present && slot.createdAt
          ? [
              {
                package: pkg.id,
                key: field.key,
                kind: field.kind ?? '',
                version: slot.version ?? 0,
                created_at: slot.createdAt,
              },
            ]
          : [];
      }),
    );
    printList(io, {
      json: values.json,
      rows,
      empty: `No secrets captured for ${agent.name}.`,
      line: (r) =>
        `${r.package} ${r.kind} present (version ${r.version}, ${r.created_at.toISOString()})`,
    });
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
