import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { stageArchive } from '../../src/app/packages/archives.ts';
import {
  ArchiveRefusedError,
  trustedKey,
  type ArchiveRefusal,
} from '../../src/manifest/archive/archive-format.ts';
import { folderFiles, signatureFor } from '../../src/manifest/archive/archive-pack.ts';
import { rawZip, type RawEntry } from '../support/raw-zip.ts';

/** Every reason an archive may be refused for: anything else thrown is a crash. */
const REASONS: ReadonlySet<ArchiveRefusal> = new Set<ArchiveRefusal>([
  'archive_too_large',
  'archive_unreadable',
  'encrypted_entry',
  'non_utf8_name',
  'bad_name',
  'absolute_path',
  'path_traversal',
  'symlink',
  'hard_link',
  'special_file',
  'duplicate_entry',
  'too_many_files',
  'oversized_manifest',
  'oversized_file',
  'decompression_bomb',
  'missing_manifest',
  'unsigned',
  'bad_signature_entry',
  'digest_mismatch',
  'unknown_key',
  'bad_signature',
  'invalid_manifest',
  'unsupported_mesh_api',
  'unsupported_manifest_version',
  'unsupported_hook_protocol',
]);

const HOSTILE_NAMES = [
  '../evil.json',
  '../../evil.json',
  'schemas/../../../evil.json',
  '/tmp/evil.json',
  'C:/evil.json',
  'C:\\evil.json',
  'a\\..\\..\\evil.json',
  '.',
  '..',
  './manifest.toml',
  'a//b.json',
  'manifest.toml',
  'MANIFEST.TOML',
  'SKILL.md',
  'MESH-SIGNATURE.json',
  'schemas/a.json',
  'dir/',
  'evil\u0000.json',
  'caf\u00e9.json',
  'cafe\u0301.json',
  '\u202eevil.json',
];

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const trusted = [trustedKey('fuzz', publicKey.export({ type: 'spki', format: 'pem' }).toString())!];
const memory = folderFiles(join(process.cwd(), 'tools/memory'));
const signatureEntry = signatureFor(memory, privateKey);
/** The memory package, signed, as raw entries: the base hostile entries are mixed into. */
const validEntries: RawEntry[] = [
  ...[...memory].map(([name, content]) => ({ name, content, deflate: true })),
  { name: 'MESH-SIGNATURE.json', content: signatureEntry },
];

const nameArb = fc.oneof(
  fc.constantFrom(...HOSTILE_NAMES),
  fc.string({ minLength: 0, maxLength: 40 }),
  fc.uint8Array({ minLength: 1, maxLength: 24 }),
);

const contentArb = fc.oneof(
  fc.uint8Array({ maxLength: 256 }),
  fc.constantFrom(Buffer.alloc(200 * 1024, 0), Buffer.from('{"type":"object"}')),
);

const entryArb: fc.Arbitrary<RawEntry> = fc.record(
  {
    name: nameArb,
    content: contentArb,
    deflate: fc.boolean(),
    declaredSize: fc.oneof(fc.nat({ max: 4096 }), fc.constantFrom(0, 2 ** 32 - 1, 3 * 1024 * 1024)),
    utf8: fc.boolean(),
    mode: fc.constantFrom(0o100644, 0o040755, 0o120777, 0o010644, 0o060644, 0o140755, 0),
    encrypted: fc.boolean(),
    sameAs: fc.nat({ max: 6 }),
  },
  { requiredKeys: ['name'] },
);

/** A hostile archive: entries alone, the signed package with entries mixed in, or its bytes flipped. */
const archiveArb: fc.Arbitrary<Buffer> = fc.oneof(
  fc.array(entryArb, { maxLength: 8 }).map((entries) => rawZip(fixOffsets(entries))),
  fc.tuple(fc.array(entryArb, { minLength: 1, maxLength: 3 }), fc.nat()).map(([extra, at]) => {
    const all = [...validEntries];
    for (const e of extra) all.splice(at % (all.length + 1), 0, e);
    return rawZip(fixOffsets(all));
  }),
  fc
    .array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 })
    .map((flips) => {
      const bytes = rawZip(validEntries);
      for (const [at, xor] of flips) bytes[at % bytes.length]! ^= xor;
      return bytes;
    }),
);

/** A "hard link" may only point back at an earlier entry. */
function fixOffsets(entries: readonly RawEntry[]): RawEntry[] {
  return entries.map((e, i) => {
    if (e.sameAs === undefined) return e;
    const { sameAs, ...rest } = e;
    return i > 0 && sameAs < i ? { ...rest, sameAs } : rest;
  });
}

/** Every path under `dir`, relative to it. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) =>
    relative(dir, join(e.parentPath, e.name)),
  );
}

/*
 * Issue 20's fuzzing of the archive ingester: generated hostile archives (hostile names, link and
 * device modes, lying sizes, shared local headers, the encryption flag, random entries mixed into
 * a signed package, flipped bytes of one) are staged. Every one ends staged or refused with a
 * typed reason — no other error — and nothing is ever written outside the staged root, nor left
 * in it half done.
 */
describe('the archive ingester under generated hostile archives', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mesh-fuzz-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const nest = join(scratch, 'a', 'b');
  const root = join(nest, 'root');
  mkdirSync(nest, { recursive: true });

  it('stages or refuses with a typed reason, and writes nothing outside the staged root', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(archiveArb, async (bytes) => {
        let outcome = 'staged';
        try {
          const staged = await stageArchive(bytes, { root, trusted });
          expect(staged.id).toBe('mesh.memory');
        } catch (error) {
          if (!(error instanceof ArchiveRefusedError)) throw error;
          expect(REASONS.has(error.reason)).toBe(true);
          outcome = error.reason;
        }
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
        // Outside the root: only the folders that hold it. Inside: staged packages, never a
        // staging or set-aside folder.
        expect(tree(scratch).filter((p) => !p.startsWith(join('a', 'b', 'root')))).toEqual([
          'a',
          join('a', 'b'),
        ]);
        for (const top of existsSync(root) ? readdirSync(root) : [])
          expect(top).toBe('mesh.memory');
        expect(existsSync('/tmp/evil.json')).toBe(false);
      }),
      { numRuns: Number(process.env['ARCHIVE_FUZZ_RUNS'] ?? 300) },
    );
    // The generator reached the ingester's defences, not only its first check.
    if (process.env['ARCHIVE_FUZZ_RUNS']) console.log(Object.fromEntries(seen));
    expect(seen.size).toBeGreaterThan(8);
  }, 120_000);
});
