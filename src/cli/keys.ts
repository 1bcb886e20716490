import { parseArgs } from 'node:util';
import { rotateDeploymentKey } from '../app/instance-key-rotation.ts';
import { commandGroup, UsageError, type CliIo } from './command.ts';

async function rotate(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { 'new-key-file': { type: 'string' } },
  });
  const file = values['new-key-file'];
  if (!file) throw new UsageError('--new-key-file is required');
  const outcome = await rotateDeploymentKey(file);
  io.out(
    `Rotated the instance key from ${outcome.from} to ${outcome.to} (${outcome.rewrapped} data ` +
      'key(s) re-wrapped by this run). Restart every replica with MESH_INSTANCE_KEY_FILE naming ' +
      'the new key file.',
  );
  return 0;
}

/** `mesh keys rotate --new-key-file F`. */
export const keysCommand = commandGroup({ rotate });
