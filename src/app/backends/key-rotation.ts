import type { BackendFamily, BackendRecord } from './family.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * A registered backend's API key, replaced in place: the one shape model providers, web
 * providers and workspace backends share (a record with an encrypted key of kind `api_key`). The
 * new key is captured as the secret's next version; the record, its grants and the agents using
 * it are untouched, and the next call reads the new key.
 */

/** How the faces name a family's key rotation. */
export interface KeyedBackendFamily {
  /** The operation's group: `providers`, `web`, `workspaces`. */
  readonly group: string;
  /** The path parameter and input field naming it: `provider`, `backend`. */
  readonly param: 'provider' | 'backend';
  /** The path of one, without the key: `/api/web/providers/{provider}`. */
  readonly path: string;
  readonly tag: string;
  /** The family itself (./families.ts). */
  readonly family: BackendFamily<BackendRecord>;
}

/** The new key's version, as the API answers a key it holds (never the key). */
export interface RotatedKey {
  readonly name: string;
  readonly present: true;
  readonly version: number;
  readonly created_at: Date | string;
}

/** The operation that replaces a family's backend key: `<group>.key`. */
export function keyRotationOperation(face: KeyedBackendFamily) {
  const { family } = face;
  const http = { method: 'PUT' as const, path: `${face.path}/api-key` };
  return defineOperation({
    name: `${face.group}.key`,
    summary: `Replace a ${family.noun}'s API key (write-only): the next call uses the new one`,
    tag: face.tag,
    input: {
      type: 'object',
      additionalProperties: false,
      required: [face.param, 'value'],
      properties: {
        [face.param]: {
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
      command: [face.group, 'key'],
      positionals: [face.param],
      files: { value: 'api-key-file' },
      print: (out: RotatedKey) => [
        `Replaced the API key of ${family.noun} ${out.name} (now version ${out.version}).`,
      ],
    },
    async run(mesh, input): Promise<RotatedKey> {
      const name = String((input as Record<string, unknown>)[face.param]);
      const { record, meta } = await family.rotateKey(mesh, name, input.value);
      return {
        name: record.name,
        present: true,
        version: meta.version,
        created_at: meta.createdAt,
      };
    },
  });
}
