#!/usr/bin/env node
// Builds dist/ — the JavaScript the `mesh` binary runs — from the TypeScript sources with esbuild:
// one bundle per entry with code splitting, so a command's module (and the drivers behind it)
// stays a separate chunk that is imported only when the command runs. Packages stay external.
//
//   node bin/build.js          build unless dist/ is already fresh
//   node bin/build.js --force  build anyway
//
// Files are written aside and renamed into place, the stamp last: a process starting during a
// build sees either the old complete build or the new one.
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { distIsFresh, STAMP } from './dist-state.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = join(root, 'dist');

/**
 * A bundled module's import.meta.url is its chunk's, not its source file's. The few modules that
 * read files next to themselves (the SQL migrations, package.json, the demo script) get their own
 * source URL back, computed relative to the chunk (every chunk sits directly in dist/), so the
 * built command reads the same files the sources do, wherever the checkout lives.
 */
const sourceUrls = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const fromChunk = relative(outdir, args.path).split('\\').join('/');
      return {
        contents: text.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`,
        ),
        loader: 'ts',
      };
    });
  },
};

export async function buildDist({ force = false } = {}) {
  if (!force && distIsFresh(root)) return { built: false };
  const startedAt = Date.now();
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: 'src/cli/main.ts' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outdir,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    write: false,
    logLevel: 'warning',
    plugins: [sourceUrls],
  });
  await mkdir(outdir, { recursive: true });
  const written = new Set([STAMP]);
  // Chunks first, entries after them, so an entry never names a chunk that is not there yet.
  const files = [...result.outputFiles].sort(
    (a, b) => Number(a.path.endsWith('/main.js')) - Number(b.path.endsWith('/main.js')),
  );
  for (const file of files) {
    const aside = `${file.path}.${process.pid}.tmp`;
    await mkdir(dirname(file.path), { recursive: true });
    writeFileSync(aside, file.contents);
    renameSync(aside, file.path);
    written.add(relative(outdir, file.path));
  }
  const aside = join(outdir, `${STAMP}.${process.pid}.tmp`);
  writeFileSync(aside, JSON.stringify({ startedAt }));
  renameSync(aside, join(outdir, STAMP));
  // Chunks of earlier builds go once no process that started with them can still be loading one.
  for (const name of readdirSync(outdir)) {
    const path = join(outdir, name);
    if (!written.has(name) && Date.now() - statSync(path).mtimeMs > 10 * 60_000)
      rmSync(path, { recursive: true, force: true });
  }
  return { built: true, files: files.length, ms: Date.now() - startedAt };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outcome = await buildDist({ force: process.argv.includes('--force') });
  if (outcome.built) console.log(`dist/: ${outcome.files} files in ${outcome.ms} ms`);
}
