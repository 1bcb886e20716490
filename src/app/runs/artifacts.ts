import { MeshError } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';
import { getArtifact } from './reads.ts';
import { resolveRun } from './run-ref.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An artifact of a run: the run by its id or a unique prefix (a refusal names `runField`), the
 * artifact by its id; one of another run is not found here.
 */
export async function runArtifact(
  mesh: Mesh,
  runRef: string,
  artifactId: string,
  runField: string,
) {
  const run = await resolveRun(mesh, runRef, runField);
  const artifact = UUID.test(artifactId) ? await getArtifact(mesh, artifactId) : undefined;
  if (!artifact || artifact.runId !== run.id)
    throw new MeshError('artifact_not_found', 'no artifact with that id in this run');
  return artifact;
}
