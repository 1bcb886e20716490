import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/store/connect.ts';

/*
 * The embedded database's folder was mode 755 and another local user read conversation text from
 * its WAL. MESH_HOME and everything under it is owner-only, whatever mode it was made with.
 */
describe('MESH_HOME on disk', () => {
  const parent = mkdtempSync(join(tmpdir(), 'mesh-perms-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  /** Every path under `dir` (itself included) whose mode lets a group or other user in. */
  const open = (dir: string): string[] =>
    [dir, ...readdirSync(dir, { recursive: true }).map((p) => join(dir, String(p)))]
      .filter((p) => !statSync(p).isSymbolicLink() && (statSync(p).mode & 0o077) !== 0)
      .map((p) => `${p.slice(dir.length) || '/'} ${(statSync(p).mode & 0o777).toString(8)}`);

  it('is owner-only after the embedded database is opened, even when made world-readable before', async () => {
    const home = join(parent, 'home');
    const db = await connect({ meshHome: home, oneShot: true });
    await db.query('create table notes (body text)');
    await db.query(`insert into notes values ('a conversation')`);
    await db.close();
    expect(open(home)).toEqual([]);

    // A home an operator (or an older Mesh) left open is tightened on the next start.
    chmodSync(home, 0o755);
    chmodSync(join(home, 'pgdata'), 0o755);
    const wal = readdirSync(join(home, 'pgdata'), { recursive: true })
      .map(String)
      .find((p) => p.startsWith('pg_wal/') && statSync(join(home, 'pgdata', p)).isFile());
    expect(wal).toBeDefined();
    chmodSync(join(home, 'pgdata', wal ?? ''), 0o644);
    expect(open(home).length).toBeGreaterThan(0);
    const again = await connect({ meshHome: home, oneShot: true });
    expect((await again.query<{ body: string }>('select body from notes')).rows).toEqual([
      { body: 'a conversation' },
    ]);
    await again.close();
    expect(open(home)).toEqual([]);
  }, 60_000);
});
