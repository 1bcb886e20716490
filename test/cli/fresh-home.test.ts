import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { meshIn, removeMeshHome } from '../support/cli.ts';

describe('the first command on a fresh home', () => {
  const home = mkdtempSync(join(tmpdir(), 'mesh-fresh-'));
  afterAll(() => removeMeshHome(home));

  it('says what it is doing while it prepares the database, and only the first time', async () => {
    const mesh = meshIn(home);
    const first = await mesh('agents', 'list');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(
      `mesh: preparing the embedded database in ${join(home, 'pgdata')} (first use of this home`,
    );
    expect(first.stdout).toContain('No agents yet');
    const second = await mesh('agents', 'list');
    expect(second.code).toBe(0);
    expect(second.stderr).toBe('');
  }, 60_000);
});
