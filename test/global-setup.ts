import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { loadInstanceKey } from '../src/secrets/instance-key.ts';
import { loadMigrations, migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/pglite.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    meshHomeTemplate: string;
  }
}

/** Templates of other digests unused for this long are removed (a run using one is long over). */
const STALE_TEMPLATE_MS = 60 * 60_000;

/**
 * What the templates are made of: the PGlite release (initdb's output), the migrations, and this
 * file's own code. A template is reused for as long as none of them changes.
 */
function templateDigest(): string {
  const pglite = join(
    dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')),
    '..',
    'package.json',
  );
  const hash = createHash('sha256');
  hash.update(
    `pglite ${(JSON.parse(readFileSync(pglite, 'utf8')) as { version: string }).version}\n`,
  );
  for (const m of loadMigrations()) hash.update(`${m.file} ${m.checksum}\n`);
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Runs initdb and the migrations into `dir`: a dump (`pglite.tar`) and a MESH_HOME with the same
 * database as a data directory and an instance key (`mesh-home/`).
 */
async function buildTemplates(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const db = await openPglite();
  await migrate(db);
  const dump = await db.dump();
  await db.close();
  writeFileSync(join(dir, 'pglite.tar'), Buffer.from(await dump.arrayBuffer()));
  const home = join(dir, 'mesh-home');
  mkdirSync(home);
  const embedded = await openPglite({
    dataDir: join(home, 'pgdata'),
    loadDataDir: dump,
    // Opened only to write the data directory out.
    bufferPool: 'small',
  });
  await embedded.close();
  await loadInstanceKey({ meshHome: home });
}

/**
 * Once per test run: builds dist/ (the CLI tests run the compiled `mesh`, as users do) and
 * provides two templates of a migrated embedded database — a dump, from which each test file
 * starts its own in-memory database in about a second instead of five, and a MESH_HOME that each
 * CLI test copies instead of initialising one. initdb and the migrations take several seconds
 * before any test can start, so the templates are kept under test-output/templates/, named by
 * what they are made of, and made again only when that changes.
 */
export default async function setup(project: TestProject): Promise<void> {
  execFileSync(process.execPath, [join(process.cwd(), 'bin', 'build.js')], { stdio: 'inherit' });
  const root = join(process.cwd(), 'test-output', 'templates');
  const digest = templateDigest();
  const dir = join(root, digest);
  if (!existsSync(dir)) {
    // Built aside and renamed into place, so a run never sees half a template; when two runs
    // build one at once, the first rename wins and the other's copy goes.
    const aside = join(root, `${digest}.${process.pid}.tmp`);
    await buildTemplates(aside);
    try {
      renameSync(aside, dir);
    } catch {
      rmSync(aside, { recursive: true, force: true });
    }
    for (const name of readdirSync(root)) {
      const path = join(root, name);
      if (name !== digest && Date.now() - statSync(path).mtimeMs > STALE_TEMPLATE_MS)
        rmSync(path, { recursive: true, force: true });
    }
  }
  const now = new Date();
  utimesSync(dir, now, now);
  project.provide('pgliteTemplate', join(dir, 'pglite.tar'));
  project.provide('meshHomeTemplate', join(dir, 'mesh-home'));
}
