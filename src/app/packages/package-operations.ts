import {
  AGENT_FIELD,
  AGENT_INPUT,
  NO_INPUT,
  PACKAGE_FIELD,
  listOrAll,
} from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';
import type { InstallAnswer } from './installs.ts';
import { driftLines } from './install-operations.ts';

/*
 * Tool packages as operations of the catalog: what the manifests declare, how each is installed
 * for one agent (enablement, values, secret presence, offers per audience), an agent's opt-out of
 * a built-in tool, and a package's audience limit for an agent.
 */

/** A package as its manifest declares it (`packageView`). */
export interface PackageAnswer {
  readonly id: string;
  readonly version: string;
  readonly description: string;
  readonly config: readonly { readonly key: string; readonly disposition: string }[];
  readonly tools: readonly { readonly name: string; readonly class: string }[];
}

/** A package as installed for an agent (`agentPackageJson`). */
export interface AgentPackageAnswer extends PackageAnswer {
  readonly audiences: readonly string[] | null;
  readonly install: InstallAnswer;
  readonly tools: readonly {
    readonly name: string;
    readonly class: string;
    readonly enabled: boolean;
    readonly offer: Readonly<Record<string, string | null>>;
  }[];
}

const catalogLine = (p: PackageAnswer) =>
  `${p.id}@${p.version}  ${p.tools.length} tool${p.tools.length === 1 ? '' : 's'}  ${p.description}`;

export const listPackagesOperation = defineOperation({
  name: 'packages.list',
  summary: 'Installed tool packages and their tools, as their manifests declare them',
  tag: 'packages',
  input: NO_INPUT,
  errors: [],
  http: { method: 'GET', path: '/api/packages' },
  cli: {
    command: ['packages', 'list'],
    print: (out: { packages: readonly PackageAnswer[] }) => out.packages.map(catalogLine),
  },
  async run(mesh): Promise<{ packages: PackageAnswer[] }> {
    const { packageViews } = await import('./packages.ts');
    return { packages: packageViews(mesh) as unknown as PackageAnswer[] };
  },
});

export const showPackageOperation = defineOperation({
  name: 'packages.show',
  summary: 'One package as its manifest declares it',
  tag: 'packages',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['package'],
    properties: { package: PACKAGE_FIELD },
  },
  errors: ['package_not_found'],
  http: { method: 'GET', path: '/api/packages/{package}' },
  cli: {
    command: ['packages', 'show'],
    positionals: ['package'],
    print: (p: PackageAnswer) => [
      catalogLine(p),
      '  config:',
      ...(p.config.length === 0
        ? ['    none']
        : p.config.map((f) => `    ${f.key}  ${f.disposition}`)),
      '  tools:',
      ...p.tools.map((t) => `    ${t.name}  ${t.class}`),
    ],
  },
  async run(mesh, input): Promise<PackageAnswer> {
    const { packageView, requirePackage } = await import('./packages.ts');
    return packageView(mesh, requirePackage(mesh, input.package));
  },
});

export const agentPackagesOperation = defineOperation({
  name: 'packages.installed',
  summary:
    'Every package as installed for an agent: enablement, config values, secret presence, and per audience whether each tool is offered (or why not)',
  tag: 'policy',
  input: AGENT_INPUT,
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/packages' },
  cli: {
    command: ['packages', 'installed'],
    print: (out: { packages: readonly AgentPackageAnswer[] }, input) =>
      out.packages.flatMap((p) => [
        `${p.id}@${p.version}  ${p.install.state}${p.audiences === null ? '' : `  audiences: ${p.audiences.join(', ') || 'none'}`}`,
        ...driftLines(p.install, String(input.agent)),
        ...p.tools.map((t) => {
          const refused = Object.entries(t.offer).filter(([, why]) => why !== null);
          return `  ${t.name}  ${t.enabled ? 'enabled' : 'disabled'}${refused.map(([audience, why]) => `  ${audience}: ${String(why)}`).join('')}`;
        }),
      ]),
  },
  async run(mesh, input): Promise<{ packages: AgentPackageAnswer[] }> {
    const [{ requireAgent }, { agentPackages }, { agentPackageJson }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./packages.ts'),
      import('../views.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const views = await agentPackages(mesh, agent);
    return { packages: views.map((v) => agentPackageJson(v) as unknown as AgentPackageAnswer) };
  },
});

export const setToolEnabledOperation = defineOperation({
  name: 'tools.set',
  summary: 'Enable or disable (opt out of) a built-in tool for an agent',
  tag: 'policy',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'tool', 'enabled'],
    properties: {
      agent: AGENT_FIELD,
      tool: { type: 'string', minLength: 1, maxLength: 200, description: 'the built-in tool' },
      enabled: { type: 'boolean', description: 'offer it to the agent (off: opted out)' },
    },
  },
  errors: ['agent_not_found', 'tool_not_found'],
  http: { method: 'PUT', path: '/api/agents/{agent}/tools/{tool}', status: 204 },
  cli: {
    command: ['tools', 'set'],
    positionals: ['tool'],
    aliases: { enable: { enabled: true }, disable: { enabled: false } },
    print: (_out: undefined, input) => [
      `${String(input['tool'])} is ${input['enabled'] ? 'enabled' : 'disabled'} for ${String(input['agent'])}.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const [{ requireAgent }, { setAgentToolEnabled }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./packages.ts'),
    ]);
    await setAgentToolEnabled(
      mesh,
      await requireAgent(mesh, input.agent),
      input.tool,
      input.enabled,
    );
    return undefined;
  },
});

export const setAudiencesOperation = defineOperation({
  name: 'packages.audiences',
  summary:
    "Limit a package's tools to some conversation audiences for an agent (null lifts the limit)",
  tag: 'policy',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'package', 'audiences'],
    properties: {
      agent: AGENT_FIELD,
      package: PACKAGE_FIELD,
      audiences: {
        anyOf: [
          { type: 'array', items: { enum: ['direct', 'shared'] }, maxItems: 2, uniqueItems: true },
          { type: 'null' },
        ],
        description: 'the audiences its tools are offered in (direct, shared; all for no limit)',
      },
    },
  },
  errors: ['agent_not_found', 'package_not_found'],
  http: { method: 'PUT', path: '/api/agents/{agent}/packages/{package}/audiences', status: 204 },
  cli: {
    command: ['packages', 'audiences'],
    positionals: ['package'],
    readers: { audiences: listOrAll },
    print: (_out: undefined, input) => [
      input['audiences'] === null
        ? `${String(input['package'])} is offered to ${String(input['agent'])} in every audience.`
        : `${String(input['package'])} is offered to ${String(input['agent'])} in: ${(input['audiences'] as string[]).join(', ') || 'no audience'}.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const [{ requireAgent }, { setAgentAudiences }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./packages.ts'),
    ]);
    await setAgentAudiences(
      mesh,
      await requireAgent(mesh, input.agent),
      input.package,
      input.audiences ?? undefined,
    );
    return undefined;
  },
});

export const packageOperations = [
  listPackagesOperation,
  showPackageOperation,
  agentPackagesOperation,
  setAudiencesOperation,
] as const;
