import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localBackend } from '../../src/exec/backends/local.ts';
import { describeWorkspaceBackendContract } from './backend-contract.ts';

// The same contract every backend passes, here against real bubblewrap sandboxes.
describeWorkspaceBackendContract('local (bubblewrap)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-local-contract-'));
  return {
    backend: localBackend({ directory: join(dir, 'w') }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
