import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, open, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { AES_256_KEY_BYTES, gcmOpen, gcmSeal, type GcmSealed } from './aes-gcm.ts';
import { isMeshError } from '../tool/errors.ts';
import { InstanceKeyError, SECRET_ERROR_CODES } from './errors.ts';

/** The file under `$MESH_HOME` that holds the instance key when the operator names none. */
export const INSTANCE_KEY_FILE_NAME = 'instance.key';

/**
 * The key that wraps every secret's data key. The key bytes live in a private field and never
 * leave this object: it wraps and unwraps, and serializes (JSON, `util.inspect`) as its id only.
 */
export class InstanceKey {
  /** First 8 bytes of sha256(key), hex: stored with each secret to name the key it needs. */
  readonly id: string;
  readonly #key: Buffer;

  constructor(bytes: Uint8Array) {
    if (bytes.byteLength !== AES_256_KEY_BYTES) {
      throw new RangeError(`an instance key is ${AES_256_KEY_BYTES} bytes`);
    }
    this.#key = Buffer.from(bytes);
    this.id = instanceKeyId(this.#key);
  }

  /** Wraps a data key (AES-256-GCM), authenticated together with `aad`. */
  wrap(dataKey: Uint8Array, aad: Uint8Array): GcmSealed {
    return gcmSeal(this.#key, dataKey, aad);
  }

  /** Unwraps a data key; undefined when it (or `aad`) fails to authenticate. */
  unwrap(nonce: Uint8Array, wrapped: Uint8Array, aad: Uint8Array): Buffer | undefined {
    return gcmOpen(this.#key, nonce, wrapped, aad);
  }

  /** Logged or serialized, an instance key shows its id and nothing else. */
  toJSON(): { instanceKeyId: string } {
    return { instanceKeyId: this.id };
  }

  toString(): string {
    return `InstanceKey ${this.id}`;
  }

  [inspect.custom](): string {
    return `InstanceKey { id: '${this.id}' }`;
  }
}

/** The id of a key: operators can compute it with `sha256sum <file> | cut -c1-16`. */
export function instanceKeyId(key: Uint8Array): string {
  return createHash('sha256').update(key).digest().subarray(0, 8).toString('hex');
}

/** Where the instance key comes from. Never from an environment variable. */
export interface LoadInstanceKeyOptions {
  /** `$MESH_HOME`: the key is `instance.key` in it, created on first start. */
  readonly meshHome: string;
  /** A key file the operator provides instead; it must already exist. */
  readonly keyFile?: string;
}

/**
 * Loads the instance key. The file holds exactly 32 raw random bytes (create one with
 * `head -c 32 /dev/urandom > key && chmod 600 key`) and must not be readable by group or others.
 * With `keyFile` that file is required; otherwise `$MESH_HOME/instance.key` is read, or created
 * with mode 0600 when absent. Concurrent first starts all end with the same key. Refusals are
 * {@link InstanceKeyError}s naming the path.
 */
export async function loadInstanceKey(options: LoadInstanceKeyOptions): Promise<InstanceKey> {
  if (options.keyFile !== undefined) {
    const path = resolve(options.keyFile);
    const key = await readKeyFile(path);
    if (key === undefined) {
      throw new InstanceKeyError(
        SECRET_ERROR_CODES.instanceKeyMissing,
        path,
        `the instance key file ${path} does not exist`,
      );
    }
    return key;
  }
  const home = resolve(options.meshHome);
  await mkdir(home, { recursive: true, mode: 0o700 });
  const path = join(home, INSTANCE_KEY_FILE_NAME);
  const existing = await readKeyFile(path);
  if (existing !== undefined) return existing;
  // Whether this process won a creation race or lost it, the file now holds the one key.
  await createKeyFile(home, path);
  const created = await readKeyFile(path);
  if (created !== undefined) return created;
  throw new InstanceKeyError(
    SECRET_ERROR_CODES.instanceKeyMissing,
    path,
    `the instance key file ${path} could not be created`,
  );
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Reads and checks a key file; undefined when it does not exist. */
async function readKeyFile(path: string): Promise<InstanceKey | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw unreadable(path, error);
  }
  try {
    // Checked on the open descriptor, so the file judged is the file read.
    const stat = await handle.stat();
    if (!stat.isFile()) {
      throw new InstanceKeyError(
        SECRET_ERROR_CODES.instanceKeyUnreadable,
        path,
        `the instance key file ${path} is not a regular file`,
      );
    }
    if ((stat.mode & 0o077) !== 0) {
      throw new InstanceKeyError(
        SECRET_ERROR_CODES.instanceKeyExposed,
        path,
        `the instance key file ${path} is readable or writable by group or others ` +
          `(mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}); run chmod 600 on it`,
      );
    }
    if (stat.size !== AES_256_KEY_BYTES) {
      throw malformed(path, stat.size);
    }
    const bytes = Buffer.alloc(AES_256_KEY_BYTES + 1);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
    if (bytesRead !== AES_256_KEY_BYTES) throw malformed(path, bytesRead);
    const key = new InstanceKey(bytes.subarray(0, AES_256_KEY_BYTES));
    bytes.fill(0);
    return key;
  } catch (error) {
    if (isMeshError(error)) throw error;
    throw unreadable(path, error);
  } finally {
    await handle.close();
  }
}

function malformed(path: string, size: number): InstanceKeyError {
  return new InstanceKeyError(
    SECRET_ERROR_CODES.instanceKeyMalformed,
    path,
    `the instance key file ${path} holds ${size} bytes; an instance key is exactly ` +
      `${AES_256_KEY_BYTES} raw bytes`,
  );
}

function unreadable(path: string, error: unknown): InstanceKeyError {
  const errno = errnoOf(error) ?? 'an I/O error';
  return new InstanceKeyError(
    SECRET_ERROR_CODES.instanceKeyUnreadable,
    path,
    `the instance key file ${path} cannot be read (${errno})`,
    { cause: error },
  );
}

/**
 * Creates the key file so that it appears whole or not at all: the key is written and synced to
 * a private temporary file (O_EXCL, 0600), then hard-linked into place. link(2) fails when the
 * name exists, so of racing creators exactly one wins and the others read its key.
 */
async function createKeyFile(home: string, path: string): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const key = randomBytes(AES_256_KEY_BYTES);
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      // The umask can only narrow 0600; this also undoes an unusual umask that removes u+r.
      await handle.chmod(0o600);
      await handle.write(key, 0, key.length, 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, path);
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw error;
      return;
    }
    await syncDirectory(home);
  } catch (error) {
    if (isMeshError(error)) throw error;
    throw new InstanceKeyError(
      SECRET_ERROR_CODES.instanceKeyUnreadable,
      path,
      `the instance key file ${path} cannot be created (${errnoOf(error) ?? 'an I/O error'})`,
      { cause: error },
    );
  } finally {
    key.fill(0);
    await unlink(temporary).catch(() => undefined);
  }
}

/** Makes the new directory entry durable: losing the key after a crash loses every secret. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
