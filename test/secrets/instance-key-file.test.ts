import type { ErrorCode } from '../../src/tool/error-codes.ts';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setEnv } from '../support/env.ts';
import { SECRET_ERROR_CODES } from '../../src/secrets/errors.ts';
import {
  INSTANCE_KEY_FILE_NAME,
  instanceKeyId,
  loadInstanceKey,
} from '../../src/secrets/instance-key.ts';
import { hasCode, serializeError } from '../../src/tool/errors.ts';

const run = promisify(execFile);
const moduleUrl = new URL('../../src/secrets/instance-key.ts', import.meta.url).href;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mesh-instance-key-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Loads expecting a refusal with `code` whose message names `path` and not the file's bytes. */
async function refusal(load: Promise<unknown>, code: ErrorCode, path: string, content?: Buffer) {
  const error = await load.then(
    () => {
      throw new Error('expected the key to be refused');
    },
    (e: unknown) => e,
  );
  expect(hasCode(error, code)).toBe(true);
  const shown = JSON.stringify(serializeError(error));
  expect(shown).toContain(path);
  // Too short a content could occur in any message by chance; a key-sized one cannot.
  if (content && content.byteLength >= 8) {
    expect(shown).not.toContain(content.toString('hex'));
    expect(shown).not.toContain(content.toString('base64'));
    expect(shown).not.toContain(content.toString('latin1'));
  }
  return (error as Error).message;
}

function operatorKey(bytes: Buffer, mode: number): string {
  const path = join(dir, 'operator.key');
  writeFileSync(path, bytes, { mode });
  chmodSync(path, mode);
  return path;
}

describe('the instance key in $MESH_HOME', () => {
  it('is created on first start as 32 random bytes with mode 0600, and reused after', async () => {
    const home = join(dir, 'home');
    const first = await loadInstanceKey({ meshHome: home });
    const path = join(home, INSTANCE_KEY_FILE_NAME);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const bytes = readFileSync(path);
    expect(bytes.byteLength).toBe(32);
    expect(first.id).toBe(instanceKeyId(bytes));
    expect((await loadInstanceKey({ meshHome: home })).id).toBe(first.id);
    expect(readdirSync(home)).toEqual([INSTANCE_KEY_FILE_NAME]);
  });

  it('gives every concurrent first start in one process the same key', async () => {
    const home = join(dir, 'home');
    const keys = await Promise.all(
      Array.from({ length: 24 }, () => loadInstanceKey({ meshHome: home })),
    );
    const ids = new Set(keys.map((k) => k.id));
    expect(ids.size).toBe(1);
    expect(ids.has(instanceKeyId(readFileSync(join(home, INSTANCE_KEY_FILE_NAME))))).toBe(true);
    expect(readdirSync(home)).toEqual([INSTANCE_KEY_FILE_NAME]);
  });

  it('gives racing processes the same key', async () => {
    const home = join(dir, 'home');
    const script =
      `import { loadInstanceKey } from ${JSON.stringify(moduleUrl)};` +
      'const key = await loadInstanceKey({ meshHome: process.argv[1] });' +
      'process.stdout.write(key.id);';
    const outputs = await Promise.all(
      Array.from({ length: 6 }, () =>
        run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, home], {
          cwd: root,
        }),
      ),
    );
    const ids = new Set(outputs.map((o) => o.stdout));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBe(instanceKeyId(readFileSync(join(home, INSTANCE_KEY_FILE_NAME))));
    expect(statSync(join(home, INSTANCE_KEY_FILE_NAME)).mode & 0o777).toBe(0o600);
  });

  it('refuses an existing key file that group or others can read', async () => {
    const home = join(dir, 'home');
    await loadInstanceKey({ meshHome: home });
    const path = join(home, INSTANCE_KEY_FILE_NAME);
    chmodSync(path, 0o644);
    const message = await refusal(
      loadInstanceKey({ meshHome: home }),
      SECRET_ERROR_CODES.instanceKeyExposed,
      path,
      readFileSync(path),
    );
    expect(message).toContain('chmod 600');
  });

  it('refuses a truncated key file rather than replacing it', async () => {
    const home = join(dir, 'home');
    mkdirSync(home);
    const path = join(home, INSTANCE_KEY_FILE_NAME);
    writeFileSync(path, Buffer.alloc(0), { mode: 0o600 });
    await refusal(
      loadInstanceKey({ meshHome: home }),
      SECRET_ERROR_CODES.instanceKeyMalformed,
      path,
    );
    expect(readFileSync(path).byteLength).toBe(0);
  });
});

describe('an operator-provided key file', () => {
  it('is used instead of $MESH_HOME, with modes 0600 and 0400', async () => {
    const bytes = randomBytes(32);
    for (const mode of [0o600, 0o400]) {
      const path = operatorKey(bytes, mode);
      const key = await loadInstanceKey({ meshHome: join(dir, 'home'), keyFile: path });
      expect(key.id).toBe(instanceKeyId(bytes));
      rmSync(path, { force: true });
    }
    expect(() => statSync(join(dir, 'home', INSTANCE_KEY_FILE_NAME))).toThrow();
  });

  it.each([0o640, 0o604, 0o660, 0o644, 0o620, 0o602])(
    'is refused with mode %o, naming the path and not the content',
    async (mode) => {
      const bytes = randomBytes(32);
      const path = operatorKey(bytes, mode);
      await refusal(
        loadInstanceKey({ meshHome: dir, keyFile: path }),
        SECRET_ERROR_CODES.instanceKeyExposed,
        path,
        bytes,
      );
    },
  );

  it.each([0, 16, 31, 33, 64, 65])('is refused when it holds %i bytes', async (size) => {
    // 64 and 65 bytes: the key written as hex, with and without a newline, is not accepted.
    const bytes =
      size >= 64
        ? Buffer.from(randomBytes(32).toString('hex') + '\n'.repeat(size - 64))
        : randomBytes(size);
    const path = operatorKey(bytes, 0o600);
    const message = await refusal(
      loadInstanceKey({ meshHome: dir, keyFile: path }),
      SECRET_ERROR_CODES.instanceKeyMalformed,
      path,
      bytes,
    );
    expect(message).toContain(`holds ${size} bytes`);
  });

  it('is refused when missing, without creating it', async () => {
    const path = join(dir, 'absent.key');
    await refusal(
      loadInstanceKey({ meshHome: dir, keyFile: path }),
      SECRET_ERROR_CODES.instanceKeyMissing,
      path,
    );
    expect(() => statSync(path)).toThrow();
    expect(() => statSync(join(dir, INSTANCE_KEY_FILE_NAME))).toThrow();
  });

  it('is refused when it is not a regular file', async () => {
    const path = join(dir, 'a-directory.key');
    mkdirSync(path, { mode: 0o700 });
    await refusal(
      loadInstanceKey({ meshHome: dir, keyFile: path }),
      SECRET_ERROR_CODES.instanceKeyUnreadable,
      path,
    );
  });

  it('is refused when its path cannot be opened', async () => {
    const file = operatorKey(randomBytes(32), 0o600);
    const path = join(file, 'key');
    await refusal(
      loadInstanceKey({ meshHome: dir, keyFile: path }),
      SECRET_ERROR_CODES.instanceKeyUnreadable,
      path,
    );
  });

  it.skipIf(process.getuid?.() === 0)('is refused when this user cannot read it', async () => {
    const path = operatorKey(randomBytes(32), 0o000);
    await refusal(
      loadInstanceKey({ meshHome: dir, keyFile: path }),
      SECRET_ERROR_CODES.instanceKeyUnreadable,
      path,
    );
  });

  it('is never taken from the environment', async () => {
    const bytes = randomBytes(32);
    const restore = setEnv({
      MESH_INSTANCE_KEY: bytes.toString('hex'),
      MESH_INSTANCE_KEY_FILE: operatorKey(bytes, 0o600),
    });
    try {
      const key = await loadInstanceKey({ meshHome: join(dir, 'home') });
      expect(key.id).not.toBe(instanceKeyId(bytes));
    } finally {
      restore();
    }
  });
});
