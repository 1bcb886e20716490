import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freshMeshHome, meshBin, meshEnv, removeMeshHome } from '../support/cli.ts';

/**
 * `mesh … | head -1`: the reader goes away before the command has written everything. The
 * command finishes as it would, quietly, instead of dying on an unhandled EPIPE.
 */
describe('the mesh command writing into a closed pipe', () => {
  const home = freshMeshHome();
  afterAll(() => removeMeshHome(home));

  it('exits as it would, with no error printed', async () => {
    const child = spawn(process.execPath, [meshBin, 'tools', 'list'], {
      env: meshEnv(home),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the command writes a line.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
