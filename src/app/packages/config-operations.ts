import { AGENT_FIELD, AGENT_INPUT, PACKAGE_FIELD } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * An agent's config and public values for its packages, as operations of the catalog: each is
 * validated against the manifest that declares its key, and a key left unset has its manifest's
 * default.
 */

const KEY = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: "the package's config key",
} as const;

export const setConfigOperation = defineOperation({
  name: 'config.set',
  summary:
    "Set one of a package's config or public values for an agent, validated against the manifest (a text value is read as the key's type)",
  tag: 'policy',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'package', 'key', 'value'],
    properties: {
      agent: AGENT_FIELD,
      package: PACKAGE_FIELD,
      key: KEY,
      value: {
        type: ['string', 'number', 'boolean'],
        maxLength: 10000,
        description: 'the value',
      },
    },
  },
  errors: ['agent_not_found', 'package_not_found', 'config_invalid', 'config_not_applied'],
  http: {
    method: 'PUT',
    path: '/api/agents/{agent}/packages/{package}/config/{key}',
    status: 204,
  },
  cli: {
    command: ['config', 'set'],
    positionals: ['key', 'value'],
    print: (_out: undefined, input) => [
      `Set ${String(input['package'])} ${String(input['key'])} for ${String(input['agent'])}.`,
    ],
  },
  async run(mesh, input, caller): Promise<undefined> {
    const [{ requireAgent }, { configValueFromText, setAgentConfig }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./packages.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    // A form, a command line or a client that sends text: read as the key's declared type.
    const value =
      typeof input.value === 'string'
        ? configValueFromText(mesh, input.package, input.key, input.value)
        : input.value;
    await setAgentConfig(mesh, agent, input.package, input.key, value, caller.actor);
    return undefined;
  },
});

export const resetConfigOperation = defineOperation({
  name: 'config.reset',
  summary: 'Return a config value to its manifest default',
  tag: 'policy',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'package', 'key'],
    properties: { agent: AGENT_FIELD, package: PACKAGE_FIELD, key: KEY },
  },
  errors: ['agent_not_found', 'package_not_found', 'config_invalid', 'config_not_applied'],
  http: {
    method: 'DELETE',
    path: '/api/agents/{agent}/packages/{package}/config/{key}',
    status: 204,
  },
  cli: {
    command: ['config', 'reset'],
    positionals: ['key'],
    print: (_out: undefined, input) => [
      `${String(input['package'])} ${String(input['key'])} is back to its default for ${String(input['agent'])}.`,
    ],
  },
  async run(mesh, input, caller): Promise<undefined> {
    const [{ requireAgent }, { resetAgentConfig }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./packages.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    await resetAgentConfig(mesh, agent, input.package, input.key, caller.actor);
    return undefined;
  },
});

export const listConfigOperation = defineOperation({
  name: 'config.list',
  summary: "An agent's config and public values in force, by package (defaults included)",
  tag: 'policy',
  input: AGENT_INPUT,
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/config' },
  cli: {
    command: ['config', 'list'],
    print: (out: { config: Readonly<Record<string, Readonly<Record<string, unknown>>>> }) =>
      Object.entries(out.config).flatMap(([id, values]) =>
        Object.entries(values).map(([k, v]) => `${id} ${k} = ${JSON.stringify(v)}`),
      ),
  },
  async run(mesh, input): Promise<{ config: Record<string, Record<string, unknown>> }> {
    const [{ requireAgent }, { agentConfig }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./policy.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const configFor = await agentConfig(mesh, agent.id);
    return {
      config: Object.fromEntries(
        mesh.catalog.packages.map((p) => [
          p.manifest.package.id,
          { ...configFor(p.manifest.package.id) },
        ]),
      ),
    };
  },
});

/** The agent config's operations, in the order help lists them. */
export const configOperations = [
  setConfigOperation,
  listConfigOperation,
  resetConfigOperation,
] as const;
