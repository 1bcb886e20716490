import type { SecretOwnerType } from '../../secrets/secret-records.ts';
import type { ErrorCode } from '../../tool/error-codes.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * A registered backend's API key, replaced in place: the one shape model providers, web
 * providers and workspace backends share (a record with an encrypted key of kind `api_key`). The
 * new key is captured as the secret's next version; the record, its grants and the agents using
 * it are untouched, and the next call reads the new key.
 */

/** What differs between the families of registered backends. */
export interface KeyedBackendFamily {
  /** The operation's group: `providers`, `web`, `workspaces`. */
  readonly group: string;
  /** What one is called: `model provider`. */
  readonly noun: string;
  /** The path parameter and input field naming it: `provider`, `backend`. */
  readonly param: 'provider' | 'backend';
  /** The path of one, without the key: `/api/web/providers/{provider}`. */
  readonly path: string;
  readonly tag: string;
  readonly ownerType: SecretOwnerType;
  readonly notFound: ErrorCode;
  /** The record by name, with why it takes no key when it does not (a scripted provider). */
  find(
    mesh: Mesh,
    name: string,
  ): Promise<{ readonly id: string; readonly name: string; readonly noKey?: string } | undefined>;
}

/** The new key's version, as the API answers a key it holds (never the key). */
export interface RotatedKey {
  readonly name: string;
  readonly present: true;
  readonly version: number;
  readonly created_at: Date | string;
}

/** The operation that replaces a family's backend key: `<group>.key`. */
export function keyRotationOperation(family: KeyedBackendFamily) {
  const http = { method: 'PUT' as const, path: `${family.path}/api-key` };
  return defineOperation({
    name: `${family.group}.key`,
    summary: `Replace a ${family.noun}'s API key (write-only): the next call uses the new one`,
    tag: family.tag,
    input: {
      type: 'object',
      additionalProperties: false,
      required: [family.param, 'value'],
      properties: {
        [family.param]: {
          type: 'string',
          minLength: 1,
          maxLength: 200,
          description: `the ${family.noun}, by name`,
        },
        value: {
          type: 'string',
          minLength: 1,
          maxLength: 65536,
          description: 'the new API key',
        },
      },
    } as const,
    errors: [family.notFound, 'secret_value_invalid', 'invalid_provider'],
    http,
    cli: {
      command: [family.group, 'key'],
      positionals: [family.param],
      files: { value: 'api-key-file' },
      print: (out: RotatedKey) => [
        `Replaced the API key of ${family.noun} ${out.name} (now version ${out.version}).`,
      ],
    },
    async run(mesh, input): Promise<RotatedKey> {
      const name = String((input as Record<string, unknown>)[family.param]);
      const record = await family.find(mesh, name);
      if (!record)
        throw new MeshError(family.notFound, `no ${family.noun} named ${quoteName(name)}`);
      if (record.noKey !== undefined) throw new MeshError('invalid_provider', record.noKey);
      const value = input.value.trim();
      if (value === '') throw new MeshError('secret_value_invalid', 'the API key is empty');
      const meta = await mesh.secrets.capture({
        ownerType: family.ownerType,
        ownerId: record.id,
        kind: 'api_key',
        value,
        field: 'value',
      });
      return {
        name: record.name,
        present: true,
        version: meta.version,
        created_at: meta.createdAt,
      };
    },
  });
}
