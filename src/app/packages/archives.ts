import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import {
  ArchiveRefusedError,
  keyId,
  trustedKey,
  type TrustedKey,
} from '../../manifest/archive/archive-format.ts';
import { packArchive } from '../../manifest/archive/archive-pack.ts';
import { verifyArchive, type VerifiedArchive } from '../../manifest/archive/archive-verify.ts';
import { resolveMeshHome } from '../../store/connect.ts';
import { MeshError } from '../../tool/errors.ts';

/*
 * The archive path a third-party loader would need, as metadata only (no code is ever loaded):
 * trusted publisher keys, verification, and staging a verified package's metadata (manifest,
 * schema files, SKILL.md) into $MESH_HOME/packages/<id>, activated atomically with rollback.
 */

/** Where the operator keeps trusted publisher keys: one Ed25519 public key (PEM) per `NAME.pub`. */
export function trustDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolveMeshHome(env), 'trusted-keys');
}

/** Where staged packages live, one folder per package id. */
export function stagedRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolveMeshHome(env), 'packages');
}

/**
 * The operator's trusted keys: every `*.pub` in the trust folder, and each file given. A file that
 * is not an Ed25519 public key is refused by name (never its content).
 */
export function loadTrustedKeys(options: {
  dir?: string;
  files?: readonly string[];
}): TrustedKey[] {
  const paths: { name: string; path: string }[] = [];
  if (options.dir && existsSync(options.dir))
    for (const f of readdirSync(options.dir).sort())
      if (f.endsWith('.pub')) paths.push({ name: f.slice(0, -4), path: join(options.dir, f) });
  for (const path of options.files ?? [])
    paths.push({ name: path.replace(/^.*[/\\]/, '').replace(/\.pub$/, ''), path });
  return paths.map(({ name, path }) => {
    let pem: string;
    try {
      pem = readFileSync(path, 'utf8');
    } catch {
      throw new MeshError('invalid_input', `trusted key ${path} cannot be read`);
    }
    const key = trustedKey(name, pem);
    if (!key)
      throw new MeshError(
        'invalid_input',
        `trusted key ${path} is not an Ed25519 public key (PEM)`,
      );
    return key;
  });
}

/** What staging a package came to: the package, its digest and signer, and where it is. */
export interface StagedPackage {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly signer: string;
  readonly path: string;
  /** The version it replaced, when one was staged before. */
  readonly replaced?: string;
}

/** The record a staged folder carries of what it holds and who signed it. */
const STAGED_RECORD = '.mesh-staged.json';

function previousVersion(folder: string): string | undefined {
  try {
    const record = JSON.parse(readFileSync(join(folder, STAGED_RECORD), 'utf8')) as {
      version?: unknown;
    };
    return typeof record.version === 'string' ? record.version : undefined;
  } catch {
    return undefined;
  }
}

/** Points a test can fail staging at, to see that nothing is left half done. */
export interface StageFaults {
  afterWrite?(staging: string): void;
  beforeSwap?(): void;
}

/**
 * Verifies an archive, then stages its files: written into a fresh staging folder under the
 * staged root (every path resolved and held inside it), then swapped in for the package's folder
 * with two renames; the folder it replaces is restored if the swap fails. A refusal, or a failure
 * anywhere, leaves the staged root as it was.
 */
export async function stageArchive(
  bytes: Uint8Array,
  options: { root: string; trusted: readonly TrustedKey[]; faults?: StageFaults },
): Promise<StagedPackage> {
  const verified: VerifiedArchive = await verifyArchive(bytes, options.trusted);
  const { id, version } = verified.package.manifest.package;
  const root = resolve(options.root);
  mkdirSync(root, { recursive: true });
  const staging = mkdtempSync(join(root, '.staging-'));
  const target = join(root, id);
  let aside: string | undefined;
  try {
    // Metadata only: the manifest, the schema files it references and SKILL.md. Anything else the
    // archive holds (code) is covered by its digest and signature, and never written out.
    const metadata = new Set([
      'manifest.toml',
      'SKILL.md',
      ...Object.keys(verified.package.schemaFiles),
    ]);
    for (const [path, content] of verified.files) {
      if (!metadata.has(path)) continue;
      const file = resolve(staging, path);
      if (!file.startsWith(staging + sep))
        throw new ArchiveRefusedError(
          'path_traversal',
          'an entry resolves outside the staging folder',
        );
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content, { flag: 'wx', mode: 0o644 });
    }
    const record = {
      id,
      version,
      digest: verified.digest,
      signer: verified.signer.name,
      staged_at: new Date().toISOString(),
    };
    writeFileSync(join(staging, STAGED_RECORD), `${JSON.stringify(record, null, 2)}\n`, {
      flag: 'wx',
    });
    options.faults?.afterWrite?.(staging);
    const replaced = existsSync(target) ? previousVersion(target) : undefined;
    if (existsSync(target)) {
      aside = join(root, `.previous-${randomUUID()}`);
      renameSync(target, aside);
    }
    try {
      options.faults?.beforeSwap?.();
      renameSync(staging, target);
    } catch (error) {
      if (aside) renameSync(aside, target);
      aside = undefined;
      throw error;
    }
    if (aside) rmSync(aside, { recursive: true, force: true });
    return {
      id,
      version,
      digest: verified.digest,
      signer: verified.signer.name,
      path: target,
      ...(replaced === undefined ? {} : { replaced }),
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Packs a package folder into a signed archive with the publisher's Ed25519 key (PEM file), and
 * reads it back as a verifier would (the publisher's own key trusted): a package Mesh would refuse
 * is refused here, before it is published.
 */
export async function packFolder(
  dir: string,
  keyFile: string,
): Promise<{ bytes: Buffer; id: string; version: string; digest: string }> {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(keyFile, 'utf8'));
  } catch {
    throw new MeshError('invalid_input', `signing key ${keyFile} is not a private key (PEM)`);
  }
  const bytes = await packArchive(dir, key);
  const publicKey = createPublicKey(key);
  const self: TrustedKey = { name: 'publisher', key: publicKey, id: keyId(publicKey) };
  const verified = await verifyArchive(bytes, [self]);
  const { id, version } = verified.package.manifest.package;
  return { bytes, id, version, digest: verified.digest };
}

/** A new publisher key pair: the private key (PKCS#8 PEM) and its public key (SPKI PEM). */
export function newPublisherKey(): { privatePem: string; publicPem: string; id: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    id: keyId(publicKey),
  };
}

export { verifyArchive, ArchiveRefusedError };
