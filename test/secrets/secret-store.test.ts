import type { ErrorCode } from '../../src/tool/error-codes.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_ERROR_CODES } from '../../src/secrets/errors.ts';
import { InstanceKey } from '../../src/secrets/instance-key.ts';
import { agentToolOwnerId, type SecretOwner } from '../../src/secrets/secret-input.ts';
import { createSecretStore, type SecretStore } from '../../src/secrets/secret-store.ts';
import { secretRows } from '../../src/store/secrets.ts';
import type { Db } from '../../src/store/db.ts';
import { hasCode, serializeError } from '../../src/tool/errors.ts';
import { testDatabases } from '../support/db.ts';

const KIND = 'linear_api_key';

function canary(): string {
  return `canary-${randomUUID()}-plaintext`;
}

/** Every rendering of the canary that could show up in a dump of the database. */
function renderings(value: string): string[] {
  const raw = Buffer.from(value, 'utf8');
  return [value, raw.toString('hex'), raw.toString('base64'), value.slice(0, 16)];
}

async function expectRefusal(promise: Promise<unknown>, code: ErrorCode, plaintext: string) {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(hasCode(error, code)).toBe(true);
  const shown = [JSON.stringify(serializeError(error)), String(error), inspect(error)].join('\n');
  for (const r of renderings(plaintext)) expect(shown).not.toContain(r);
  return (error as Error).message;
}

describe.each(testDatabases())('the secret store on $name', (database) => {
  let db: Db;
  let dispose: () => Promise<void>;
  let key: InstanceKey;
  let store: SecretStore;

  const agentOwner = (): SecretOwner => ({ ownerType: 'agent', ownerId: randomUUID() });
  const toolOwner = (): SecretOwner => ({
    ownerType: 'agent_tool',
    ownerId: agentToolOwnerId(randomUUID(), 'mesh.linear'),
  });

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
    key = new InstanceKey(randomBytes(32));
    store = createSecretStore(secretRows(db), key);
  });
  afterAll(() => dispose());

  async function rowsOf(owner: SecretOwner) {
    const { rows } = await db.query<{
      id: string;
      version: number;
      key_id: string;
      wrapped_key: Uint8Array | null;
      ciphertext: Uint8Array | null;
      retired_at: Date | null;
    }>('select * from secrets where owner_type = $1 and owner_id = $2 order by version', [
      owner.ownerType,
      owner.ownerId,
    ]);
    return rows;
  }

  it('reveals what it captured and returns metadata only', async () => {
    const owner = toolOwner();
    const value = canary();
    const metadata = await store.capture({ ...owner, kind: KIND, value });
    expect(Object.keys(metadata).sort()).toEqual(
      ['createdAt', 'kind', 'ownerId', 'ownerType', 'present', 'version'].sort(),
    );
    expect(metadata).toMatchObject({ ...owner, kind: KIND, version: 1, present: true });
    expect(metadata.createdAt).toBeInstanceOf(Date);
    expect(Object.isFrozen(metadata)).toBe(true);
    expect(await store.reveal({ ...owner, kind: KIND })).toBe(value);
    const [row] = await rowsOf(owner);
    expect(row?.key_id).toBe(key.id);
  });

  it('seals every version under a fresh data key, even for the same value', async () => {
    const owner = agentOwner();
    const value = canary();
    await store.capture({ ...owner, kind: KIND, value });
    await store.capture({ ...owner, kind: KIND, value });
    const [a, b] = await rowsOf(owner);
    expect(Buffer.from(a!.ciphertext!).equals(Buffer.from(b!.ciphertext!))).toBe(false);
    expect(Buffer.from(a!.wrapped_key!).equals(Buffer.from(b!.wrapped_key!))).toBe(false);
    expect(await store.reveal({ ...owner, kind: KIND })).toBe(value);
  });

  it('never stores, describes or shows the plaintext anywhere', async () => {
    const owner = toolOwner();
    const value = canary();
    const captured = await store.capture({ ...owner, kind: KIND, value });
    const described = await store.describe(owner);
    const one = await store.describeOne(owner, KIND);
    const shown = [captured, described, one, store, key]
      .flatMap((x) => [JSON.stringify(x), inspect(x, { showHidden: true, depth: 8 })])
      .join('\n');

    // Every column of the secrets table as text, and each bytea column in every encoding.
    const { rows: columns } = await db.query<{ column_name: string; data_type: string }>(
      `select column_name, data_type from information_schema.columns
        where table_schema = current_schema() and table_name = 'secrets'`,
    );
    expect(columns.length).toBeGreaterThanOrEqual(12);
    const selections = columns.flatMap(({ column_name: c, data_type: t }) =>
      t === 'bytea'
        ? [`${c}::text`, `encode(${c}, 'escape')`, `encode(${c}, 'base64')`, `encode(${c}, 'hex')`]
        : [`${c}::text`],
    );
    const { rows: cells } = await db.query<Record<string, string | null>>(
      `select ${selections.map((s, i) => `${s} as c${i}`).join(', ')} from secrets`,
    );
    // And every row of every table in the schema, in case the value leaked elsewhere.
    const { rows: tables } = await db.query<{ table_name: string }>(
      `select table_name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'`,
    );
    const dumps: string[] = [];
    for (const { table_name } of tables) {
      const { rows } = await db.query<{ row: string }>(
        `select t::text as row from "${table_name}" t`,
      );
      dumps.push(...rows.map((r) => r.row));
    }
    const everything = [shown, ...dumps, ...cells.flatMap((r) => Object.values(r))].join('\n');
    expect(everything).toContain(owner.ownerId);
    for (const r of renderings(value)) expect(everything).not.toContain(r);
  });

  it('keeps owners and kinds apart', async () => {
    const agent = randomUUID();
    const linear = {
      ownerType: 'agent_tool',
      ownerId: agentToolOwnerId(agent, 'mesh.linear'),
    } as const;
    const github = {
      ownerType: 'agent_tool',
      ownerId: agentToolOwnerId(agent, 'mesh.github'),
    } as const;
    await store.capture({ ...linear, kind: KIND, value: 'linear-value' });
    await store.capture({ ...linear, kind: 'webhook_secret', value: 'hook-value' });
    await store.capture({ ...github, kind: KIND, value: 'github-value' });
    expect(await store.reveal({ ...linear, kind: KIND })).toBe('linear-value');
    expect(await store.reveal({ ...github, kind: KIND })).toBe('github-value');
    expect(await store.reveal({ ...linear, kind: 'webhook_secret' })).toBe('hook-value');
    expect(await store.reveal({ ownerType: 'agent', ownerId: agent, kind: KIND })).toBeUndefined();
    expect((await store.describe(linear)).map((m) => m.kind)).toEqual([KIND, 'webhook_secret']);
    expect((await store.describe(github)).map((m) => m.kind)).toEqual([KIND]);
  });

  it('rotates by capturing again, and retires every version', async () => {
    const owner = toolOwner();
    const slot = { ...owner, kind: KIND };
    await store.capture({ ...slot, value: 'first' });
    const second = await store.capture({ ...slot, value: 'second' });
    expect(second.version).toBe(2);
    expect(await store.reveal(slot)).toBe('second');
    expect((await store.describe(owner)).map((m) => [m.kind, m.version])).toEqual([[KIND, 2]]);
    expect((await store.describeOne(owner, KIND))?.version).toBe(2);

    expect(await store.retire(owner, KIND)).toBe(true);
    expect(await store.reveal(slot)).toBeUndefined();
    expect(await store.describe(owner)).toEqual([]);
    expect(await store.describeOne(owner, KIND)).toBeUndefined();
    const rows = await rowsOf(owner);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.retired_at).toBeInstanceOf(Date);
      expect(row.ciphertext).toBeNull();
      expect(row.wrapped_key).toBeNull();
    }
    expect(await store.retire(owner, KIND)).toBe(false);

    const third = await store.capture({ ...slot, value: 'third' });
    expect(third.version).toBe(3);
    expect(await store.reveal(slot)).toBe('third');
  });

  it('gives concurrent captures of one slot distinct versions', async () => {
    const owner = agentOwner();
    const values = Array.from({ length: 12 }, (_, i) => `value-${i}`);
    const captured = await Promise.all(
      values.map((value) => store.capture({ ...owner, kind: KIND, value })),
    );
    const versions = captured.map((m) => m.version).sort((a, b) => a - b);
    expect(versions).toEqual(values.map((_, i) => i + 1));
    const newest = values[captured.findIndex((m) => m.version === 12)];
    expect(await store.reveal({ ...owner, kind: KIND })).toBe(newest);
  });

  it.each([
    ['ciphertext', 'ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1)'],
    ['nonce', 'nonce = set_byte(nonce, 11, get_byte(nonce, 11) # 128)'],
    ['wrapped key', 'wrapped_key = set_byte(wrapped_key, 47, get_byte(wrapped_key, 47) # 1)'],
    ['key nonce', 'key_nonce = set_byte(key_nonce, 0, get_byte(key_nonce, 0) # 1)'],
    ['version', 'version = version + 10'],
    ['kind', `kind = 'other_kind'`],
  ])('refuses to reveal a secret whose %s was altered', async (field, change) => {
    const owner = toolOwner();
    const value = canary();
    const { version } = await store.capture({ ...owner, kind: KIND, value });
    await db.query(
      `update secrets set ${change} where owner_type = $1 and owner_id = $2 and version = $3`,
      [owner.ownerType, owner.ownerId, version],
    );
    const kind = field === 'kind' ? 'other_kind' : KIND;
    const message = await expectRefusal(
      store.reveal({ ...owner, kind }),
      SECRET_ERROR_CODES.undecryptable,
      value,
    );
    expect(message).toContain(owner.ownerId);
  });

  it('refuses a row moved or copied to another owner', async () => {
    const victim = toolOwner();
    const thief = toolOwner();
    const value = canary();
    await store.capture({ ...victim, kind: KIND, value });
    await store.capture({ ...thief, kind: KIND, value: 'the-thiefs-own' });
    // Copy the victim's sealed material over the thief's row.
    await db.query(
      `update secrets t set wrapped_key = v.wrapped_key, key_nonce = v.key_nonce, nonce = v.nonce,
         ciphertext = v.ciphertext
        from secrets v where v.owner_id = $1 and t.owner_id = $2`,
      [victim.ownerId, thief.ownerId],
    );
    await expectRefusal(
      store.reveal({ ...thief, kind: KIND }),
      SECRET_ERROR_CODES.undecryptable,
      value,
    );
    // Move the victim's row itself to a third owner.
    const third = toolOwner();
    await db.query('update secrets set owner_id = $2 where owner_id = $1', [
      victim.ownerId,
      third.ownerId,
    ]);
    expect(await store.reveal({ ...victim, kind: KIND })).toBeUndefined();
    await expectRefusal(
      store.reveal({ ...third, kind: KIND }),
      SECRET_ERROR_CODES.undecryptable,
      value,
    );
  });

  it('names both key ids when this Mesh has another instance key', async () => {
    const owner = agentOwner();
    const value = canary();
    await store.capture({ ...owner, kind: KIND, value });
    const other = new InstanceKey(randomBytes(32));
    const elsewhere = createSecretStore(secretRows(db), other);
    const message = await expectRefusal(
      elsewhere.reveal({ ...owner, kind: KIND }),
      SECRET_ERROR_CODES.keyMismatch,
      value,
    );
    expect(message).toContain(
      `secret was encrypted under instance key ${key.id}; this Mesh has ${other.id}`,
    );
    // Presence is metadata: it is still described under the wrong key.
    expect((await elsewhere.describeOne(owner, KIND))?.version).toBe(1);
  });

  it('refuses bad input naming the field, writing nothing and echoing no value', async () => {
    const owner = agentOwner();
    const value = canary();
    const cases: [Promise<unknown>, ErrorCode][] = [
      [store.capture({ ...owner, kind: 'Bad-Kind', value }), SECRET_ERROR_CODES.kindInvalid],
      [store.capture({ ...owner, kind: KIND, value: '' }), SECRET_ERROR_CODES.valueInvalid],
      [
        store.capture({ ...owner, kind: KIND, value: value.repeat(3000) }),
        SECRET_ERROR_CODES.valueInvalid,
      ],
      [
        store.capture({
          ownerType: 'agent_connector',
          ownerId: owner.ownerId,
          kind: KIND,
          value,
        } as never),
        SECRET_ERROR_CODES.ownerInvalid,
      ],
      [
        store.capture({ ownerType: 'agent_tool', ownerId: owner.ownerId, kind: KIND, value }),
        SECRET_ERROR_CODES.ownerInvalid,
      ],
      [store.reveal({ ...owner, kind: '' }), SECRET_ERROR_CODES.kindInvalid],
    ];
    for (const [promise, code] of cases) await expectRefusal(promise, code, value);
    expect(await rowsOf(owner)).toEqual([]);
  });

  it('holds the owner types, kinds and sealed material in SQL too', async () => {
    const insert = (ownerType: string, kind: string, material: boolean) =>
      db.query(
        `insert into secrets (id, owner_type, owner_id, kind, version, key_id, wrapped_key, key_nonce,
           nonce, ciphertext) values ($1, $2, 'x', $3, 1, 'k', $4, $4, $4, $4)`,
        [randomUUID(), ownerType, kind, material ? Buffer.from([1]) : null],
      );
    // One at a time: a rejection that is not awaited yet is reported as unhandled.
    for (const attempt of [
      () => insert('agent_connector', KIND, true),
      () => insert('agent', 'Bad', true),
      () => insert('agent', KIND, false),
    ]) {
      await expect(attempt()).rejects.toSatisfy((e) => hasCode(e, 'database_error'));
    }
  });
});
