import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import {
  ARCHIVE_LIMITS,
  ArchiveRefusedError,
  SIGNATURE_ENTRY,
  type ArchiveRefusal,
} from './archive-format.ts';

/** An archive's files by normalized path (the signature entry apart), read and accounted. */
export interface ArchiveFiles {
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The signature entry's bytes, when there is one. */
  readonly signature?: Uint8Array;
}

/** General purpose flag bit 11: the entry's name is UTF-8. */
const UTF8_NAME = 0x800;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function refuse(reason: ArchiveRefusal, message: string, cause?: unknown): never {
  throw new ArchiveRefusedError(reason, message, cause === undefined ? undefined : { cause });
}

/**
 * An entry's path, checked and normalized (NFC): UTF-8 whatever its flag says, relative, no `..`,
 * no empty or `.` segments, no backslashes or control characters. `at` names the entry by its
 * position, never by its name.
 */
function entryPath(entry: Entry, at: string): string {
  const raw = entry.fileNameRaw ?? Buffer.from(entry.fileName);
  let name: string;
  try {
    name = utf8.decode(raw);
  } catch {
    return refuse('non_utf8_name', `${at}'s name is not UTF-8`);
  }
  // A name without the UTF-8 flag must still be plain ASCII to read the same everywhere.
  if ((entry.generalPurposeBitFlag & UTF8_NAME) === 0 && /[^\x20-\x7e]/.test(name))
    refuse('non_utf8_name', `${at}'s name is not marked UTF-8 and is not plain ASCII`);
  name = name.normalize('NFC');
  if (name.length === 0 || name.length > ARCHIVE_LIMITS.maxPathLength)
    refuse('bad_name', `${at}'s name is empty or longer than ${ARCHIVE_LIMITS.maxPathLength}`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) refuse('bad_name', `${at}'s name has control characters`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name))
    refuse('absolute_path', `${at} has an absolute path`);
  if (name.includes('\\')) refuse('bad_name', `${at}'s name uses \\ as a separator`);
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.includes('..')) refuse('path_traversal', `${at}'s path leaves the package folder`);
  if (segments.some((s) => s === '' || s === '.'))
    refuse('bad_name', `${at}'s path has an empty or . segment`);
  return name;
}

/** Refuses what is not a plain file or folder: links and special files. */
function checkKind(entry: Entry, at: string): void {
  const madeBy = (entry.versionMadeBy >> 8) & 0xff;
  const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
  // Unix (3) and macOS (19) keep a mode in the high attribute bits; others carry no file type.
  if (madeBy !== 3 && madeBy !== 19) return;
  const type = mode & S_IFMT;
  if (type === S_IFLNK) refuse('symlink', `${at} is a symbolic link`);
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR)
    refuse('special_file', `${at} is not a regular file or folder`);
}

/** Reads one entry's bytes, counting them: more than it declared, or than a cap, is refused. */
async function inflate(zip: ZipFile, entry: Entry, cap: number, at: string): Promise<Buffer> {
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (error) {
    return refuse('archive_unreadable', `${at} cannot be read`, error);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > entry.uncompressedSize || total > cap) {
        stream.destroy();
        refuse('decompression_bomb', `${at} inflates past what it declared`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ArchiveRefusedError) throw error;
    // yauzl's own size check: the entry inflates past the size it declared.
    if (error instanceof Error && error.message.startsWith('too many bytes'))
      refuse('decompression_bomb', `${at} inflates past what it declared`, error);
    // Its CRC check, and a broken deflate stream.
    return refuse('archive_unreadable', `${at} is corrupt`, error);
  }
  if (total !== entry.uncompressedSize)
    refuse('archive_unreadable', `${at} is shorter than declared`);
  return Buffer.concat(chunks, total);
}

/** The zip's next entry (lazily read), or undefined at its end. */
function nextEntry(zip: ZipFile): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    const done = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: Entry) => {
      done();
      resolve(entry);
    };
    const onEnd = () => {
      done();
      resolve(undefined);
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/**
 * Reads a package archive into memory, entry by entry, refusing with a typed reason at the first
 * fault: what the zip declares is checked before an entry is inflated (names, kinds, duplicates,
 * counts, sizes, ratios), and inflating counts every byte against what was declared and the caps.
 * Nothing is written anywhere.
 */
export async function readArchive(bytes: Uint8Array): Promise<ArchiveFiles> {
  if (bytes.byteLength > ARCHIVE_LIMITS.maxArchiveBytes)
    refuse('archive_too_large', `the archive is over ${ARCHIVE_LIMITS.maxArchiveBytes} bytes`);
  let zip: ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(Buffer.from(bytes), {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: true,
      strictFileNames: false,
    });
  } catch (error) {
    return refuse(
      'archive_unreadable',
      'it is not a zip archive, or its directory is corrupt',
      error,
    );
  }
  try {
    if (zip.entryCount > ARCHIVE_LIMITS.maxFiles * 2)
      refuse('too_many_files', `it lists more than ${ARCHIVE_LIMITS.maxFiles} files`);
    const files = new Map<string, Uint8Array>();
    const folded = new Set<string>();
    const offsets = new Set<number>();
    let signature: Uint8Array | undefined;
    let declared = 0;
    let count = 0;
    for (let index = 1; ; index++) {
      let entry: Entry | undefined;
      try {
        entry = await nextEntry(zip);
      } catch (error) {
        refuse('archive_unreadable', `entry ${index} cannot be read`, error);
      }
      if (!entry) break;
      const at = `entry ${index}`;
      const path = entryPath(entry, at);
      checkKind(entry, at);
      if (entry.isEncrypted()) refuse('encrypted_entry', `${at} is encrypted`);
      // Two names over one stored content: the zip's hard link (and an overlapping-entry bomb).
      if (offsets.has(entry.relativeOffsetOfLocalHeader))
        refuse('hard_link', `${at} shares its content with an earlier entry`);
      offsets.add(entry.relativeOffsetOfLocalHeader);
      // A folder and its case-folded twin would be one path on some file systems.
      const key = path.replace(/\/$/, '').toLowerCase();
      if (folded.has(key)) refuse('duplicate_entry', `${at} repeats the path of an earlier entry`);
      folded.add(key);
      if (path.endsWith('/')) continue;
      count += 1;
      if (count > ARCHIVE_LIMITS.maxFiles)
        refuse('too_many_files', `it holds more than ${ARCHIVE_LIMITS.maxFiles} files`);
      const isManifest = path === 'manifest.toml';
      const cap = isManifest ? ARCHIVE_LIMITS.maxManifestBytes : ARCHIVE_LIMITS.maxFileBytes;
      if (entry.uncompressedSize > cap)
        refuse(
          isManifest ? 'oversized_manifest' : 'oversized_file',
          `${at} is over ${cap} bytes${isManifest ? ' (manifest.toml)' : ''}`,
        );
      declared += entry.uncompressedSize;
      if (declared > ARCHIVE_LIMITS.maxTotalBytes)
        refuse(
          'decompression_bomb',
          `its files inflate past ${ARCHIVE_LIMITS.maxTotalBytes} bytes`,
        );
      if (
        entry.uncompressedSize > ARCHIVE_LIMITS.ratioFloorBytes &&
        entry.uncompressedSize > entry.compressedSize * ARCHIVE_LIMITS.maxRatio
      )
        refuse(
          'decompression_bomb',
          `${at} inflates over ${ARCHIVE_LIMITS.maxRatio} times its size`,
        );
      const content = await inflate(zip, entry, cap, at);
      if (path === SIGNATURE_ENTRY) signature = content;
      else files.set(path, content);
    }
    return signature === undefined ? { files } : { files, signature };
  } finally {
    zip.close();
  }
}
