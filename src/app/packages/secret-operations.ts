import { AGENT_FIELD, AGENT_INPUT, PACKAGE_FIELD } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * An agent's own credentials for its packages' secret fields, as operations of the catalog. They
 * are write-only: capturing one answers its kind, version and date, and nothing ever answers a
 * value.
 */

/** A captured secret as the API answers it: presence, never the value. */
export interface SecretAnswer {
  readonly package: string;
  readonly key: string;
  readonly kind: string;
  readonly present: true;
  readonly version: number;
  readonly created_at: string;
}

const KEY = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: "the package's secret field",
} as const;

export const setSecretOperation = defineOperation({
  name: 'secrets.set',
  summary:
    "Capture the agent's own credential for a package's secret field (write-only: the answer is presence and version)",
  tag: 'policy',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'package', 'key', 'value'],
    properties: {
      agent: AGENT_FIELD,
      package: PACKAGE_FIELD,
      key: KEY,
      value: { type: 'string', minLength: 1, maxLength: 65536, description: 'the secret' },
    },
  },
  errors: [
    'agent_not_found',
    'package_not_found',
    'secret_field_unknown',
    'secret_value_invalid',
    'secret_refused',
  ],
  http: { method: 'PUT', path: '/api/agents/{agent}/packages/{package}/secrets/{key}' },
  cli: {
    command: ['secrets', 'set'],
    files: { value: 'value-file' },
    print: (s: SecretAnswer, input) => [
      `Captured ${s.kind} for ${String(input['agent'])} (version ${s.version}).`,
    ],
  },
  async run(mesh, input, caller): Promise<SecretAnswer> {
    const [{ requireAgent }, { captureAgentSecret }] = await Promise.all([
      import('../agents/agents.ts'),
      import('../agents/secrets.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    // A value file's trailing newline is not part of the secret.
    const meta = await captureAgentSecret(
      mesh,
      agent,
      input.package,
      input.key,
      input.value.trim(),
      caller.actor,
    );
    return {
      package: input.package,
      key: input.key,
      kind: meta.kind,
      present: true,
      version: meta.version,
      created_at: new Date(meta.createdAt).toISOString(),
    };
  },
});

export const removeSecretOperation = defineOperation({
  name: 'secrets.remove',
  summary: "Revoke the agent's credential for a package's secret field",
  tag: 'policy',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'package', 'key'],
    properties: { agent: AGENT_FIELD, package: PACKAGE_FIELD, key: KEY },
  },
  errors: ['agent_not_found', 'package_not_found', 'secret_field_unknown'],
  http: {
    method: 'DELETE',
    path: '/api/agents/{agent}/packages/{package}/secrets/{key}',
    status: 204,
  },
  cli: {
    command: ['secrets', 'remove'],
    print: (_out: undefined, input) => [
      `Revoked ${String(input['agent'])}'s ${String(input['package'])} ${String(input['key'])}.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const [{ requireAgent }, { retireAgentSecret }] = await Promise.all([
      import('../agents/agents.ts'),
      import('../agents/secrets.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    await retireAgentSecret(mesh, agent, input.package, input.key);
    return undefined;
  },
});

export const listSecretsOperation = defineOperation({
  name: 'secrets.list',
  summary: "The agent's captured secrets: package, field, kind, version and date (never a value)",
  tag: 'policy',
  input: AGENT_INPUT,
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/secrets' },
  cli: {
    command: ['secrets', 'list'],
    print: (out: { secrets: readonly SecretAnswer[] }, input) =>
      out.secrets.length === 0
        ? [`No secrets captured for ${String(input['agent'])}.`]
        : out.secrets.map(
            (s) => `${s.package} ${s.kind} present (version ${s.version}, ${s.created_at})`,
          ),
  },
  async run(mesh, input): Promise<{ secrets: SecretAnswer[] }> {
    const [{ requireAgent }, { agentPackages }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./packages.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const packages = await agentPackages(mesh, agent);
    return {
      secrets: packages.flatMap((pkg) =>
        pkg.config.flatMap((field): SecretAnswer[] => {
          const slot = pkg.secrets[field.key];
          return slot?.present && slot.createdAt
            ? [
                {
                  package: pkg.id,
                  key: field.key,
                  kind: field.kind ?? '',
                  present: true,
                  version: slot.version ?? 0,
                  created_at: new Date(slot.createdAt).toISOString(),
                },
              ]
            : [];
        }),
      ),
    };
  },
});

/** The agent secrets' operations, in the order help lists them. */
export const secretOperations = [
  setSecretOperation,
  listSecretsOperation,
  removeSecretOperation,
] as const;
