import { rotateInstanceKey } from '../secrets/instance-key-record.ts';
import { loadInstanceKey } from '../secrets/instance-key.ts';
import { connect, resolveMeshHome } from '../store/connect.ts';
import { instanceKeyRows } from '../store/instance-key.ts';
import { migrate } from '../store/migrate.ts';
import { meshOptionsFromEnv } from './compose.ts';

/** What a rotation did: the two fingerprints, and how many data keys this run re-wrapped. */
export interface RotationOutcome {
  readonly from: string;
  readonly to: string;
  readonly rewrapped: number;
}

/**
 * Rotates the deployment's instance key from the current one (MESH_INSTANCE_KEY_FILE, or the
 * default in $MESH_HOME) to the key in `newKeyFile`, re-wrapping every secret's data key in this
 * process. Interrupted, it is continued by running it again with the same two files. Afterwards
 * every replica must be restarted with MESH_INSTANCE_KEY_FILE naming the new file.
 */
export async function rotateDeploymentKey(
  newKeyFile: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RotationOutcome> {
  const options = meshOptionsFromEnv(env);
  const meshHome = options.meshHome ?? resolveMeshHome(env);
  const from = await loadInstanceKey({
    meshHome,
    ...(options.instanceKeyFile ? { keyFile: options.instanceKeyFile } : {}),
  });
  const to = await loadInstanceKey({ meshHome, keyFile: newKeyFile });
  const db = await connect({ ...options, oneShot: true });
  try {
    await migrate(db);
    const rewrapped = await rotateInstanceKey(instanceKeyRows(db), from, to);
    return { from: from.id, to: to.id, rewrapped };
  } finally {
    await db.close();
  }
}
