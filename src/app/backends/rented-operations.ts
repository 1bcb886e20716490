import type { ErrorCode } from '../../tool/error-codes.ts';
import { AGENT_INPUT, nameField } from '../operations/fields.ts';
import type { Operation } from '../operations/operation.ts';
import type { RentedAdmin } from './rented-admin.ts';
import { addInputSchema, type NewRentedBackend, type RentedKinds } from './rented-kinds.ts';

/*
 * The operations every rented-backend family (workspace backends, browser backends) has, made
 * from the family's declaration: registering a backend of a declared kind, removing one with its
 * grants and key, and revoking an agent's grant. What differs (the grant's own settings, the
 * listing of live sessions) stays with the family.
 */

/** How the faces name a family, and where its use cases are. */
export interface RentedFace {
  /** The operations' group and tag: `workspaces`. */
  readonly group: string;
  readonly kinds: RentedKinds;
  /** The collection of backends: `/api/workspaces/backends`. */
  readonly backendsPath: string;
  /** An agent's grant: `/api/agents/{agent}/workspace-backend`. */
  readonly grantPath: string;
  /** The add operation's summary (which kinds, what each needs). */
  readonly addSummary: string;
  /** What an agent loses with its grant: `its workspace tools are no longer offered`. */
  readonly revoked: string;
  /** The family's use cases, imported when an operation runs (declaring loads no store). */
  admin(): Promise<RentedAdmin>;
}

/** A backend as the API answers it (never its key: only whether one is held). */
export interface RentedBackendAnswer {
  readonly name: string;
  readonly kind: string;
  readonly development: boolean;
  readonly settings: Readonly<Record<string, unknown>>;
  /** Whether its key is held; null for a kind that takes none. */
  readonly api_key: { readonly present: boolean } | null;
}

type Input = Readonly<Record<string, unknown>>;

/** The add, remove and revoke operations of a rented-backend family. */
export function rentedOperations(face: RentedFace) {
  const { group, kinds } = face;
  const { noun } = kinds;
  const add: Operation<Input, RentedBackendAnswer> = {
    name: `${group}.add`,
    summary: face.addSummary,
    tag: group,
    input: addInputSchema(kinds),
    errors: ['invalid_backend', 'backend_exists', 'development_only'] satisfies ErrorCode[],
    http: { method: 'POST', path: face.backendsPath, status: 201 },
    cli: {
      command: [group, 'add'],
      files: { api_key: 'api-key-file' },
      switches: ['development'],
      flags: { development: 'dev' },
      print: (b) => [
        `Added ${noun} ${b.name} (${b.kind}${b.development ? ', development only' : ''}).`,
      ],
    },
    async run(mesh, input) {
      const added = await (await face.admin()).add(mesh, input as NewRentedBackend);
      const keyed = kinds.kinds.find((k) => k.name === added.kind)?.keyed === true;
      return {
        name: added.name,
        kind: added.kind,
        development: added.development,
        settings: added.settings,
        api_key: keyed ? { present: true } : null,
      };
    },
  };
  const remove: Operation<Input, undefined> = {
    name: `${group}.remove`,
    summary: `Remove a ${noun} with its grants and its API key`,
    tag: group,
    input: {
      type: 'object',
      additionalProperties: false,
      required: ['backend'],
      properties: { backend: nameField(`the ${noun}, by name`) },
    },
    errors: ['backend_not_found'],
    http: { method: 'DELETE', path: `${face.backendsPath}/{backend}`, status: 204 },
    cli: {
      command: [group, 'remove'],
      positionals: ['backend'],
      print: (_out, input) => [`Removed ${noun} ${String(input['backend'])} and its grants.`],
    },
    async run(mesh, input) {
      await (await face.admin()).remove(mesh, String(input['backend']));
      return undefined;
    },
  };
  const revoke: Operation<Input, { agent: string; revoked: boolean }> = {
    name: `${group}.revoke`,
    summary: `Revoke an agent's ${noun}: ${face.revoked}; \`revoked\` says whether it had one`,
    tag: group,
    input: AGENT_INPUT,
    errors: ['agent_not_found'],
    http: { method: 'DELETE', path: face.grantPath },
    cli: {
      command: [group, 'revoke'],
      print: (out) => [out.revoked ? `Revoked ${out.agent}'s ${noun}.` : `${out.agent} had none.`],
    },
    async run(mesh, input) {
      const agent = String(input['agent']);
      return { agent, revoked: await (await face.admin()).revoke(mesh, agent) };
    },
  };
  return { add, remove, revoke };
}
