import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const bin = join(process.cwd(), 'bin', 'mesh.js');

/** What one run of the real `mesh` binary printed and returned. */
export interface MeshInvocation {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Returns a runner of the real `mesh` binary on the embedded database in `home`. */
export function meshIn(home: string): (...args: string[]) => Promise<MeshInvocation> {
  return async (...args) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
        env: { ...process.env, MESH_HOME: home, DATABASE_URL: '' },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
}
