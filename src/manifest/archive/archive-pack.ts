import { createPublicKey, sign, type KeyObject } from 'node:crypto';
import yazl from 'yazl';
import { fileHashes, packageDigest } from '../digest.ts';
import { readFolder } from '../folder-files.ts';
import {
  ARCHIVE_LIMITS,
  ArchiveRefusedError,
  SIGNATURE_ENTRY,
  keyId,
  signedPayload,
  type ArchiveSignature,
} from './archive-format.ts';

/** Every time in a packed archive: the same bytes for the same files. */
const EPOCH = new Date('2000-01-01T00:00:00Z');

/** A folder's files by relative path: regular files only (a link is refused, never followed). */
export function folderFiles(dir: string): Map<string, Uint8Array> {
  const read = readFolder(dir, ARCHIVE_LIMITS.maxFiles);
  if (read.ok) return read.files;
  switch (read.reason) {
    case 'symlink':
      throw new ArchiveRefusedError(
        'symlink',
        `${read.path} is a symbolic link; a package holds files`,
      );
    case 'special_file':
      throw new ArchiveRefusedError('special_file', `${read.path} is not a regular file`);
    case 'too_many_files':
      throw new ArchiveRefusedError(
        'too_many_files',
        `the folder holds more than ${ARCHIVE_LIMITS.maxFiles} files`,
      );
  }
}

/** Zips a file set as given (paths and bytes), with fixed times and modes. */
export function zipFiles(files: ReadonlyMap<string, Uint8Array>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [path, bytes] of files)
    zip.addBuffer(Buffer.from(bytes), path, { mtime: EPOCH, mode: 0o100644 });
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** The signature entry for a file set, signed with the publisher's Ed25519 private key. */
export function signatureFor(
  files: ReadonlyMap<string, Uint8Array>,
  privateKey: KeyObject,
): Uint8Array {
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new ArchiveRefusedError('bad_signature', 'the signing key is not an Ed25519 private key');
  const digest = packageDigest(fileHashes(files));
  const signature: ArchiveSignature = {
    version: 2,
    algorithm: 'ed25519',
    key_id: keyId(createPublicKey(privateKey)),
    digest,
    signature: sign(null, signedPayload(2, digest), privateKey).toString('base64'),
  };
  return Buffer.from(`${JSON.stringify(signature, null, 2)}\n`, 'utf8');
}

/**
 * Packs a package folder into a signed archive: its regular files at the archive's root, and
 * MESH-SIGNATURE.json over their digest. The same folder and key give the same bytes.
 */
export async function packArchive(dir: string, privateKey: KeyObject): Promise<Buffer> {
  const files = folderFiles(dir);
  if (files.has(SIGNATURE_ENTRY))
    throw new ArchiveRefusedError(
      'bad_name',
      `the folder holds ${SIGNATURE_ENTRY}, which the archive reserves`,
    );
  const signed = new Map(files);
  signed.set(SIGNATURE_ENTRY, signatureFor(files, privateKey));
  return zipFiles(signed);
}
