import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadInstanceKey } from '../src/secrets/instance-key.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/pglite.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    meshHomeTemplate: string;
  }
}

/**
 * Once per test run: builds dist/ (the CLI tests run the compiled `mesh`, as users do), runs
 * initdb and the migrations, and shares the result twice — as a dump, from which each test file
 * starts its own in-memory database in about a second instead of five, and as a template
 * MESH_HOME (an embedded data directory already migrated, and an instance key) that each CLI test
 * copies instead of initialising one.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  execFileSync(process.execPath, [join(process.cwd(), 'bin', 'build.js')], { stdio: 'inherit' });
  const dir = join(process.cwd(), 'test-output');
  mkdirSync(dir, { recursive: true });
  const db = await openPglite();
  await migrate(db);
  const dump = await db.dump();
  await db.close();
  const path = join(dir, `pglite-template-${process.pid}.tar`);
  writeFileSync(path, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', path);

  const home = mkdtempSync(join(dir, 'mesh-home-template-'));
  const embedded = await openPglite({ dataDir: join(home, 'pgdata'), loadDataDir: dump });
  await embedded.close();
  await loadInstanceKey({ meshHome: home });
  project.provide('meshHomeTemplate', home);
  return () => {
    rmSync(path, { force: true });
    rmSync(home, { recursive: true, force: true });
  };
}
