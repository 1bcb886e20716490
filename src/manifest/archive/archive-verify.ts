import { verify as verifySignature } from 'node:crypto';
import { fileHashes, packageDigest } from '../digest.ts';
import type { ToolPackage } from '../package-manifest.ts';
import { embeddedFiles } from '../package-files.ts';
import { readPackage, type ReadOptions } from '../read-package.ts';
import {
  ArchiveRefusedError,
  legacyArchiveDigest,
  signedPayload,
  type ArchiveRefusal,
  type ArchiveSignature,
  type TrustedKey,
} from './archive-format.ts';
import { readArchive } from './archive-read.ts';

/** An archive that passed every check: who signed it, what it is, and its files. */
export interface VerifiedArchive {
  readonly package: ToolPackage;
  /** The archive's content digest (over its file set). */
  readonly digest: string;
  /** The trusted key it was signed with, by the operator's name for it. */
  readonly signer: TrustedKey;
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseSignature(bytes: Uint8Array | undefined): ArchiveSignature {
  if (bytes === undefined)
    throw new ArchiveRefusedError('unsigned', 'it has no MESH-SIGNATURE.json entry');
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw new ArchiveRefusedError('bad_signature_entry', 'MESH-SIGNATURE.json is not JSON');
  }
  const s = value as Partial<ArchiveSignature> | null;
  if (
    typeof s !== 'object' ||
    s === null ||
    (s.version !== 1 && s.version !== 2) ||
    s.algorithm !== 'ed25519' ||
    typeof s.key_id !== 'string' ||
    typeof s.digest !== 'string' ||
    typeof s.signature !== 'string'
  )
    throw new ArchiveRefusedError(
      'bad_signature_entry',
      'MESH-SIGNATURE.json is not a version 1 or 2 ed25519 signature (version, algorithm, key_id, digest, signature)',
    );
  return s as ArchiveSignature;
}

/** A diagnostic's code as the archive's refusal: a version Mesh does not support, or invalid. */
function manifestRefusal(code: string): ArchiveRefusal {
  if (code === 'mesh_api_unsatisfied' || code === 'mesh_api_invalid') return 'unsupported_mesh_api';
  if (code === 'manifest_version_unsupported') return 'unsupported_manifest_version';
  if (code === 'hook_protocol_unsupported') return 'unsupported_hook_protocol';
  return 'invalid_manifest';
}

function text(files: ReadonlyMap<string, Uint8Array>, path: string): string | undefined {
  const bytes = files.get(path);
  if (bytes === undefined) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ArchiveRefusedError('invalid_manifest', `${path} is not UTF-8 text`);
  }
}

/**
 * Verifies a package archive without writing or running anything: read with every hardening
 * check, its content digest recomputed and matched, its Ed25519 signature checked against the
 * operator's trusted keys, and its manifest validated strictly (as the crawl does, versions
 * included). Refuses with a typed {@link ArchiveRefusedError} at the first fault.
 */
export async function verifyArchive(
  bytes: Uint8Array,
  trusted: readonly TrustedKey[],
  options: Pick<ReadOptions, 'meshApiVersion'> = {},
): Promise<VerifiedArchive> {
  const { files, signature } = await readArchive(bytes);
  const signed = parseSignature(signature);
  const hashes = fileHashes(files);
  const digest = packageDigest(hashes);
  const signedOver = signed.version === 1 ? legacyArchiveDigest(files) : digest;
  if (signed.digest !== signedOver)
    throw new ArchiveRefusedError(
      'digest_mismatch',
      'its files do not match the digest it was signed over: it changed after signing',
    );
  const signer = trusted.find((k) => k.id === signed.key_id);
  if (!signer)
    throw new ArchiveRefusedError(
      'unknown_key',
      `it is signed with key ${signed.key_id.replace(/[^0-9a-f]/g, '').slice(0, 16)}, which is not among the trusted keys`,
    );
  const ok = verifySignature(
    null,
    signedPayload(signed.version, signedOver),
    signer.key,
    Buffer.from(signed.signature, 'base64'),
  );
  if (!ok)
    throw new ArchiveRefusedError(
      'bad_signature',
      `its signature does not verify with key ${signer.name}`,
    );

  const manifestText = text(files, 'manifest.toml');
  if (manifestText === undefined)
    throw new ArchiveRefusedError('missing_manifest', 'it has no manifest.toml at its root');
  const schemaTexts: Record<string, string> = {};
  for (const path of files.keys())
    if (path.endsWith('.json')) schemaTexts[path] = text(files, path) ?? '';
  const skillText = text(files, 'SKILL.md');
  const result = readPackage(
    {
      folder: 'archive',
      displayRoot: 'archive',
      manifestText,
      files: embeddedFiles(schemaTexts),
      fileHashes: hashes,
      ...(skillText === undefined ? {} : { skillText }),
    },
    options,
  );
  if (!result.ok) {
    const first = result.diagnostics[0];
    const reason = manifestRefusal(first?.code ?? 'invalid_manifest');
    // The field and the fault, never the value: the archive's text is not echoed.
    throw new ArchiveRefusedError(
      reason,
      `manifest.toml: ${first?.field ?? '?'}: ${first?.code ?? 'invalid'}${result.diagnostics.length > 1 ? ` (and ${result.diagnostics.length - 1} more)` : ''}`,
    );
  }
  return { package: result.package, digest, signer, files };
}
