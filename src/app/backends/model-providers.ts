import { randomUUID } from 'node:crypto';
import { parseScript, type Script } from '../../providers/scripted.ts';
import type { SecretMetadata } from '../../secrets/secret-store.ts';
import {
  agentsUsingProvider,
  deleteModelProviderRow,
  insertModelProvider,
  listModelProviders,
  type ModelProviderRecord,
} from '../../store/model-providers.ts';
import { MeshError } from '../../tool/errors.ts';
import { someNames } from '../agents/agents.ts';
import type { Mesh } from '../mesh.ts';
import { modelProviders } from './families.ts';
import { secretSlotView, type SecretSlotView } from '../packages/secret-slot.ts';

/** Model providers: OpenAI-compatible endpoints with their key as a secret, or scripts. */

export const PROVIDER_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** A model provider to add: an OpenAI-compatible endpoint with its key, or a script. */
export type NewProvider =
  | {
      readonly name: string;
      readonly kind: 'openai_compatible';
      readonly baseUrl: string;
      readonly apiKey: string;
      readonly contextTokens?: number;
    }
  | {
      readonly name: string;
      readonly kind: 'scripted';
      readonly script: unknown;
      readonly contextTokens?: number;
    };

/**
 * Adds a model provider; an API key is captured as the provider's secret, never stored plain.
 * The row and its key are one unit of work: a key that cannot be captured leaves no provider.
 */
export async function addModelProvider(
  mesh: Mesh,
  input: NewProvider,
): Promise<ModelProviderRecord> {
  if (!PROVIDER_NAME_PATTERN.test(input.name))
    throw new MeshError(
      'invalid_provider',
      'a provider name is 1-63 lowercase letters, digits, "-" or "_"',
    );
  if (
    input.contextTokens !== undefined &&
    (!Number.isSafeInteger(input.contextTokens) || input.contextTokens < 1000)
  )
    throw new MeshError('invalid_provider', 'context tokens must be an integer of at least 1000');
  let script: Script | null = null;
  let baseUrl: string | null = null;
  if (input.kind === 'scripted') {
    script = parseScript(input.script);
  } else {
    let url: URL;
    try {
      url = new URL(input.baseUrl);
    } catch {
      throw new MeshError('invalid_provider', 'the base URL is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new MeshError('invalid_provider', 'the base URL must be http(s)');
    if (url.username || url.password)
      throw new MeshError(
        'invalid_provider',
        'the base URL must not carry credentials; give the API key separately',
      );
    if (input.apiKey.trim() === '') throw new MeshError('invalid_provider', 'the API key is empty');
    baseUrl = url.toString();
  }
  return modelProviders.register(
    mesh,
    (db) =>
      insertModelProvider(db, {
        id: randomUUID(),
        name: input.name,
        kind: input.kind,
        baseUrl,
        script: script as never,
        ...(input.contextTokens ? { contextTokens: input.contextTokens } : {}),
      }),
    input.kind === 'openai_compatible' ? input.apiKey.trim() : undefined,
  );
}

/** Rotates a provider's API key (write-only). */
export async function setProviderKey(
  mesh: Mesh,
  nameOrId: string,
  apiKey: string,
): Promise<SecretMetadata> {
  return (await modelProviders.rotateKey(mesh, nameOrId, apiKey)).meta;
}

/** Providers with whether their key is present (never the key). */
export async function describeProviders(
  mesh: Mesh,
): Promise<(ModelProviderRecord & { apiKey: SecretSlotView | null })[]> {
  const providers = await listModelProviders(mesh.db);
  return Promise.all(
    providers.map(async (p) => {
      const meta = await modelProviders.key(mesh, p);
      return { ...p, apiKey: meta === null ? null : secretSlotView(meta) };
    }),
  );
}

/**
 * Deletes a model provider and retires its API key, in one transaction. Refused while an agent
 * uses it: the agent would be left without a model.
 */
export async function deleteModelProvider(mesh: Mesh, nameOrId: string): Promise<void> {
  await modelProviders.remove(
    mesh,
    nameOrId,
    (db, provider) => deleteModelProviderRow(db, provider.id),
    async (db, provider) => {
      const users = await agentsUsingProvider(db, provider.id);
      if (users.length > 0)
        throw new MeshError(
          'provider_in_use',
          `model provider ${provider.name} is used by ${users.length} agent${users.length === 1 ? '' : 's'} (${someNames(users)}); move or delete them first`,
        );
    },
  );
}
