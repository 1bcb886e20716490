import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  ArchiveRefusedError,
  loadTrustedKeys,
  newPublisherKey,
  packFolder,
  stageArchive,
  stagedRoot,
  trustDir,
  verifyArchive,
} from '../app/packages/archives.ts';
import { UsageError, type CliIo, type Subcommand } from './command.ts';

/*
 * `mesh packages keygen|pack|verify|stage`: the archive path, run in this process on local files
 * (no server needed). A refusal prints its typed reason and exits 1; nothing is written.
 */

function one(positionals: readonly string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected one ${what}`);
  return positionals[0] ?? '';
}

function readArchiveFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    throw new UsageError(`${path} cannot be read`);
  }
}

/** Runs `fn`, printing an archive refusal as `<command>: refused (<reason>): <message>`. */
async function refusing(command: string, io: CliIo, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ArchiveRefusedError) {
      io.err(
        `mesh packages ${command}: refused (${error.reason}): ${error.message.replace(/^[a-z_]+: /, '')}`,
      );
      return 1;
    }
    throw error;
  }
}

/** `ARCHIVE [--trust PUB]...`: the archive's bytes, and the keys trusted to have signed it. */
function archiveAndTrust(args: readonly string[]) {
  const { positionals, values } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { trust: { type: 'string', multiple: true } },
  });
  const bytes = readArchiveFile(one(positionals, 'ARCHIVE'));
  return { bytes, trusted: () => loadTrustedKeys({ dir: trustDir(), files: values.trust ?? [] }) };
}

export const archiveSubcommands: Readonly<Record<string, Subcommand>> = {
  async keygen(args, io) {
    const { positionals } = parseArgs({ args: [...args], allowPositionals: true });
    const name = one(positionals, 'NAME');
    if (existsSync(`${name}.key`) || existsSync(`${name}.pub`))
      throw new UsageError(`${name}.key or ${name}.pub exists already`);
    const pair = newPublisherKey();
    writeFileSync(`${name}.key`, pair.privatePem, { mode: 0o600, flag: 'wx' });
    writeFileSync(`${name}.pub`, pair.publicPem, { flag: 'wx' });
    io.out(`Wrote ${name}.key (keep it private) and ${name}.pub (key ${pair.id}).`);
    io.out(`Operators trust it by copying ${name}.pub into ${trustDir()}/.`);
    return 0;
  },

  async pack(args, io) {
    const { positionals, values } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { key: { type: 'string' }, out: { type: 'string' } },
    });
    const dir = one(positionals, 'DIR');
    if (!values.key) throw new UsageError('--key KEYFILE is required');
    const key = values.key;
    return refusing('pack', io, async () => {
      const packed = await packFolder(dir, key);
      const out = values.out ?? `${packed.id}-${packed.version}.zip`;
      writeFileSync(out, packed.bytes);
      io.out(`Packed ${packed.id} ${packed.version} into ${out} (digest ${packed.digest}).`);
      return 0;
    });
  },

  async verify(args, io) {
    const { bytes, trusted } = archiveAndTrust(args);
    return refusing('verify', io, async () => {
      const verified = await verifyArchive(bytes, trusted());
      const { id, version, meshApi } = verified.package.manifest.package;
      io.out(
        `Verified ${id} ${version} (mesh_api ${meshApi}): ${verified.files.size} files, digest ${verified.digest}, signed by ${verified.signer.name}.`,
      );
      return 0;
    });
  },

  async stage(args, io) {
    const { bytes, trusted } = archiveAndTrust(args);
    return refusing('stage', io, async () => {
      const staged = await stageArchive(bytes, { root: stagedRoot(), trusted: trusted() });
      io.out(
        `Staged ${staged.id} ${staged.version} at ${staged.path}${staged.replaced ? ` (replacing ${staged.replaced})` : ''}; signed by ${staged.signer}, digest ${staged.digest}. Its code is never loaded.`,
      );
      return 0;
    });
  },
};
