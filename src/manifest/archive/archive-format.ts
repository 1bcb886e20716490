import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { MeshError } from '../../tool/errors.ts';
import { PACKAGE_LIMITS } from '../versioning.ts';
import { byteOrder } from '../digest.ts';

/*
 * A package archive (format v1): a zip of a package folder's files at its root, and one reserved
 * entry, MESH-SIGNATURE.json, holding the publisher's Ed25519 signature over the content digest.
 * The digest is the package digest (`packageDigest`) of the normalized file set: every file but
 * the signature. An archive is metadata to Mesh, never code: nothing in it is ever imported or run.
 */

/** The reserved entry holding the signature; never part of the digest. */
export const SIGNATURE_ENTRY = 'MESH-SIGNATURE.json';

/** What an archive may hold; each is checked before (and while) a byte is inflated. */
export const ARCHIVE_LIMITS = Object.freeze({
  /** The archive file itself. */
  maxArchiveBytes: 16 * 1024 * 1024,
  /** Files in it (directories not counted). */
  maxFiles: 256,
  /** manifest.toml, inflated: the crawl's own cap. */
  maxManifestBytes: PACKAGE_LIMITS.maxManifestBytes,
  /** Any other file, inflated. */
  maxFileBytes: 2 * 1024 * 1024,
  /** Every file together, inflated. */
  maxTotalBytes: 32 * 1024 * 1024,
  /** Inflated over stored size, for an entry past `ratioFloorBytes`: beyond it, a bomb. */
  maxRatio: 100,
  ratioFloorBytes: 64 * 1024,
  /** An entry's path. */
  maxPathLength: 255,
});

/** Why an archive was refused: each a fact about the archive, never a value from it. */
export type ArchiveRefusal =
  | 'archive_too_large'
  | 'archive_unreadable'
  | 'encrypted_entry'
  | 'non_utf8_name'
  | 'bad_name'
  | 'absolute_path'
  | 'path_traversal'
  | 'symlink'
  | 'hard_link'
  | 'special_file'
  | 'duplicate_entry'
  | 'too_many_files'
  | 'oversized_manifest'
  | 'oversized_file'
  | 'decompression_bomb'
  | 'missing_manifest'
  | 'unsigned'
  | 'bad_signature_entry'
  | 'digest_mismatch'
  | 'unknown_key'
  | 'bad_signature'
  | 'invalid_manifest'
  | 'unsupported_mesh_api'
  | 'unsupported_manifest_version'
  | 'unsupported_hook_protocol';

/**
 * An archive Mesh will not take, with its typed reason. The message says what was wrong and
 * where (an entry by its position, a field by its name), never a value from the archive.
 */
export class ArchiveRefusedError extends MeshError {
  static readonly code = 'archive_refused';
  constructor(
    readonly reason: ArchiveRefusal,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(ArchiveRefusedError.code, `${reason}: ${message}`, { reason }, options);
  }
}

/**
 * The digest a version 1 signature was made over: the line `mesh-archive-digest-v1`, then per
 * file in byte order of its path `<path>\n<byte length>\n<bytes>\n`. Kept only so an archive
 * signed before version 2 still verifies; what such an archive is (its package digest, the one
 * installs and run steps pin) is `packageDigest`, as for any other.
 */
export function legacyArchiveDigest(files: ReadonlyMap<string, Uint8Array>): string {
  const hash = createHash('sha256').update('mesh-archive-digest-v1\n', 'utf8');
  for (const path of [...files.keys()].sort(byteOrder)) {
    const bytes = files.get(path) ?? new Uint8Array();
    hash.update(`${path}\n${bytes.byteLength}\n`, 'utf8');
    hash.update(bytes);
    hash.update('\n', 'utf8');
  }
  return hash.digest('hex');
}

/** The signature versions Mesh verifies: 2 signs the package digest, 1 the legacy one. */
export type SignatureVersion = 1 | 2;

/** What the publisher signs: the framing (naming the version), and the digest. */
export function signedPayload(version: SignatureVersion, digest: string): Buffer {
  return Buffer.from(`mesh-archive-signature-v${version}\n${digest}\n`, 'utf8');
}

/** A public key's id: the first 16 hex of sha256 over its SPKI encoding. */
export function keyId(publicKey: KeyObject): string {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('hex').slice(0, 16);
}

/** The signature entry's content (v1). */
export interface ArchiveSignature {
  readonly version: SignatureVersion;
  readonly algorithm: 'ed25519';
  readonly key_id: string;
  readonly digest: string;
  /** base64 */
  readonly signature: string;
}

/** An operator-trusted publisher key, by the name the operator gave it. */
export interface TrustedKey {
  readonly name: string;
  readonly key: KeyObject;
  readonly id: string;
}

/** A trusted key from its PEM text (an Ed25519 public key); undefined when it is not one. */
export function trustedKey(name: string, pem: string): TrustedKey | undefined {
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') return undefined;
    return { name, key, id: keyId(key) };
  } catch {
    return undefined;
  }
}
