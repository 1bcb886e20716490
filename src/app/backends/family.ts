import type { SecretOwnerType } from '../../secrets/secret-records.ts';
import type { SecretMetadata } from '../../secrets/secret-store.ts';
import type { ErrorCode } from '../../tool/error-codes.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';

/*
 * A registered backend: a record an operator adds by name, whose API key (when its kind takes one)
 * is held encrypted as the record's secret, and which agents are granted. Model providers, web
 * providers and workspace backends are each a family of them (./families.ts); what a family adds
 * (its settings, its grants' shape) stays its own. The shape they share is here, once: finding
 * one by name, registering one with its key as one unit of work, removing one with its keys,
 * whether its key is held, and replacing its key in place.
 */

/** A registered backend as the family reads it. */
export interface BackendRecord {
  readonly id: string;
  readonly name: string;
}

/** What differs between families. */
export interface BackendFamilySpec<R extends BackendRecord> {
  /** What one is called: `web provider`. */
  readonly noun: string;
  /** The command that lists them, named when one is not found: `mesh web list`. */
  readonly listedBy: string;
  readonly ownerType: SecretOwnerType;
  readonly notFound: ErrorCode;
  /** The record by name (or id, where the family allows it). */
  find(mesh: Mesh, name: string): Promise<R | undefined>;
  /** Why a record takes no API key (a scripted provider, a local backend); undefined when it does. */
  noKey?(record: R): string | undefined;
}

/** The operations every family of registered backends has. */
export interface BackendFamily<R extends BackendRecord> extends BackendFamilySpec<R> {
  /** The record by name, or a `notFound` refusal naming the command that lists them. */
  require(mesh: Mesh, name: string): Promise<R>;
  /**
   * Inserts the record and captures its API key (when one is given) in one transaction: a key that
   * cannot be captured leaves no record.
   */
  register(
    mesh: Mesh,
    insert: (db: Mesh['db']) => Promise<R>,
    apiKey: string | undefined,
  ): Promise<R>;
  /**
   * Removes the record by name with every secret it holds, in one transaction; `check` may refuse
   * first (an agent still uses it), in that transaction.
   */
  remove(
    mesh: Mesh,
    name: string,
    remove: (db: Mesh['db'], record: R) => Promise<unknown>,
    check?: (db: Mesh['db'], record: R) => Promise<void>,
  ): Promise<R>;
  /** The held key's version and date, or null for a record whose kind takes none. */
  key(mesh: Mesh, record: R): Promise<SecretMetadata | undefined | null>;
  /** Captures a new key as the secret's next version; the record and its grants are untouched. */
  rotateKey(mesh: Mesh, name: string, value: string): Promise<{ record: R; meta: SecretMetadata }>;
}

/** A family of registered backends from what makes it different. */
export function backendFamily<R extends BackendRecord>(
  spec: BackendFamilySpec<R>,
): BackendFamily<R> {
  const owner = (record: R) => ({ ownerType: spec.ownerType, ownerId: record.id });
  const require = async (mesh: Mesh, name: string): Promise<R> => {
    const record = await spec.find(mesh, name);
    if (!record)
      throw new MeshError(
        spec.notFound,
        `no ${spec.noun} named ${quoteName(name)}; list them with ${spec.listedBy}`,
      );
    return record;
  };
  return Object.freeze({
    ...spec,
    require,
    register: (mesh, insert, apiKey) =>
      mesh.transaction(async ({ db, secrets }) => {
        const record = await insert(db);
        if (apiKey !== undefined)
          await secrets.capture({
            ...owner(record),
            kind: 'api_key',
            value: apiKey,
            field: 'api_key',
          });
        return record;
      }),
    async remove(mesh, name, remove, check) {
      const record = await require(mesh, name);
      await mesh.transaction(async ({ db, secrets }) => {
        await check?.(db, record);
        await secrets.retireOwners(owner(record));
        await remove(db, record);
      });
      return record;
    },
    async key(mesh, record) {
      if (spec.noKey?.(record) !== undefined) return null;
      return mesh.secrets.describeOne(owner(record), 'api_key');
    },
    async rotateKey(mesh, name, value) {
      const record = await require(mesh, name);
      const noKey = spec.noKey?.(record);
      if (noKey !== undefined) throw new MeshError('invalid_provider', noKey);
      const trimmed = value.trim();
      if (trimmed === '') throw new MeshError('secret_value_invalid', 'the API key is empty');
      const meta = await mesh.secrets.capture({
        ...owner(record),
        kind: 'api_key',
        value: trimmed,
        field: 'value',
      });
      return { record, meta };
    },
  } satisfies BackendFamily<R>);
}
