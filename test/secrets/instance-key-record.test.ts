import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInstanceKey, rotateInstanceKey } from '../../src/secrets/instance-key-record.ts';
import { InstanceKey, instanceKeyId } from '../../src/secrets/instance-key.ts';
import { createSecretStore } from '../../src/secrets/secret-store.ts';
import type { Db } from '../../src/store/db.ts';
import { instanceKeyRows } from '../../src/store/instance-key.ts';
import { secretRows } from '../../src/store/secrets.ts';
import { testDatabases } from '../support/db.ts';
import { main } from '../../src/cli/main.ts';
import { freshMeshHome, meshEnv } from '../support/cli.ts';
import { freshPostgresUrl } from '../support/postgres.ts';

/*
 * One instance key per deployment: the first start records its fingerprint, a process holding
 * another key refuses to start naming both, and a rotation interrupted midway is resumed with
 * every secret readable under the new key.
 */

async function failure(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { ...(e.code === undefined ? {} : { code: e.code }), message: e.message };
  }
  throw new Error('expected a refusal');
}

describe.each(testDatabases())('the deployment instance key on $name', (database) => {
  let db: Db;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
  });
  afterAll(() => dispose());

  it('is recorded once; another key is refused naming both fingerprints; rotation resumes after a crash', async () => {
    const rows = instanceKeyRows(db);
    const first = new InstanceKey(randomBytes(32));
    const other = new InstanceKey(randomBytes(32));
    await checkInstanceKey(rows, first);
    await checkInstanceKey(rows, first);
    const refused = await failure(checkInstanceKey(rows, other));
    expect(refused.code).toBe('instance_key_mismatch');
    expect(refused.message).toContain(first.id);
    expect(refused.message).toContain(other.id);
    expect(refused.message).toContain('MESH_INSTANCE_KEY_FILE');

    const secrets = createSecretStore(secretRows(db), first);
    const values = new Map<string, string>();
    for (let i = 0; i < 7; i++) {
      const value = `sk-value-${i}-${randomBytes(6).toString('hex')}`;
      values.set(`provider-${i}`, value);
      await secrets.capture({
        ownerType: 'model_provider',
        ownerId: `provider-${i}`,
        kind: 'api_key',
        value,
      });
    }

    // The first rotation "crashes" after its first batch of two.
    const crash = new Error('killed midway');
    const crashed = await failure(
      rotateInstanceKey(rows, first, other, {
        batchSize: 2,
        afterBatch: () => {
          throw crash;
        },
      }),
    );
    expect(crashed.message).toBe('killed midway');
    const { rows: split } = await db.query<{ keyId: string; n: number }>(
      `select key_id as "keyId", count(*)::int as n from secrets
        where owner_type = 'model_provider' group by key_id order by n`,
    );
    expect(split).toEqual([
      { keyId: other.id, n: 2 },
      { keyId: first.id, n: 5 },
    ]);
    // Until it finishes, the deployment's key is still the first one.
    await checkInstanceKey(rows, first);
    expect((await failure(checkInstanceKey(rows, other))).code).toBe('instance_key_mismatch');
    // A rotation to a third key is refused while this one is pending.
    const third = new InstanceKey(randomBytes(32));
    expect((await failure(rotateInstanceKey(rows, first, third))).code).toBe(
      'instance_key_rotation_refused',
    );

    // Run again, it continues where it stopped.
    expect(await rotateInstanceKey(rows, first, other, { batchSize: 2 })).toBe(5);
    await checkInstanceKey(rows, other);
    expect((await failure(checkInstanceKey(rows, first))).code).toBe('instance_key_mismatch');
    const rotated = createSecretStore(secretRows(db), other);
    for (const [ownerId, value] of values) {
      expect(await rotated.reveal({ ownerType: 'model_provider', ownerId, kind: 'api_key' })).toBe(
        value,
      );
    }
  });
});

/** A key file of 32 random bytes, owner-only; returns its path and fingerprint. */
function keyFile(dir: string, name: string): { path: string; fingerprint: string } {
  const bytes = randomBytes(32);
  const path = join(dir, name);
  writeFileSync(path, bytes, { mode: 0o600 });
  return { path, fingerprint: instanceKeyId(bytes) };
}

/**
 * Runs `mesh` in this process with the settings `env` gives (home, key file, database): the
 * refusal happens where `openMesh` checks the key, the same in a process of its own.
 */
async function meshWith(env: NodeJS.ProcessEnv, ...args: string[]) {
  const keys = ['MESH_HOME', 'MESH_INSTANCE_KEY_FILE', 'DATABASE_URL'] as const;
  const saved = keys.map((k) => process.env[k]);
  for (const k of keys) {
    if (env[k] === undefined || env[k] === '') delete process.env[k];
    else process.env[k] = env[k];
  }
  let stderr = '';
  try {
    const code = await main(args, { out: () => undefined, err: (t) => (stderr += `${t}\n`) });
    return { code, stderr };
  } finally {
    keys.forEach((k, i) => {
      if (saved[i] === undefined) delete process.env[k];
      else process.env[k] = saved[i];
    });
  }
}

describe('a second process with another instance key', () => {
  it('refuses to start on the embedded database, naming both fingerprints and the fix', async () => {
    const home = freshMeshHome('mesh-key-');
    const keys = mkdtempSync(join(tmpdir(), 'mesh-keys-'));
    const a = keyFile(keys, 'a.key');
    const b = keyFile(keys, 'b.key');
    expect(
      (await meshWith({ ...meshEnv(home), MESH_INSTANCE_KEY_FILE: a.path }, 'agents', 'list')).code,
    ).toBe(0);
    const refused = await meshWith(
      { ...meshEnv(home), MESH_INSTANCE_KEY_FILE: b.path },
      'agents',
      'list',
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(a.fingerprint);
    expect(refused.stderr).toContain(b.fingerprint);
    expect(refused.stderr).toContain('MESH_INSTANCE_KEY_FILE');

    // `mesh keys rotate` moves the deployment to the second key; then the first is refused.
    const rotated = await meshWith(
      { ...meshEnv(home), MESH_INSTANCE_KEY_FILE: a.path },
      'keys',
      'rotate',
      '--new-key-file',
      b.path,
    );
    expect(rotated.code).toBe(0);
    expect(
      (await meshWith({ ...meshEnv(home), MESH_INSTANCE_KEY_FILE: b.path }, 'agents', 'list')).code,
    ).toBe(0);
    const old = await meshWith(
      { ...meshEnv(home), MESH_INSTANCE_KEY_FILE: a.path },
      'agents',
      'list',
    );
    expect(old.code).not.toBe(0);
    expect(old.stderr).toContain(b.fingerprint);
  }, 60_000);

  it.skipIf(!process.env['DATABASE_URL'])(
    'refuses to start on PostgreSQL, naming both fingerprints and the fix (a replica with its own MESH_HOME)',
    async () => {
      const fresh = await freshPostgresUrl();
      try {
        const env = (home: string) => ({ ...meshEnv(home), DATABASE_URL: fresh.url });
        const first = mkdtempSync(join(tmpdir(), 'mesh-replica-'));
        const second = mkdtempSync(join(tmpdir(), 'mesh-replica-'));
        expect((await meshWith(env(first), 'agents', 'list')).code).toBe(0);
        // The second replica has no key file of its own: the default location creates a new one.
        const refused = await meshWith(env(second), 'agents', 'list');
        expect(refused.code).not.toBe(0);
        const fingerprint = (home: string) =>
          instanceKeyId(readFileSync(join(home, 'instance.key')));
        expect(refused.stderr).toContain(fingerprint(first));
        expect(refused.stderr).toContain(fingerprint(second));
        expect(refused.stderr).toContain('MESH_INSTANCE_KEY_FILE');
      } finally {
        await fresh.drop();
      }
    },
    60_000,
  );
});
