import type { SecretMetadata } from '../../secrets/secret-store.ts';
import { agentToolOwnerId } from '../../secrets/secret-input.ts';
import type { AgentRecord } from '../../run/records.ts';
import { MeshError } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';
import { requirePackage } from '../packages/packages.ts';

/** An agent's own credentials for a package's secret fields: captured, revoked, never read back. */

function secretField(mesh: Mesh, packageId: string, key: string) {
  const pkg = requirePackage(mesh, packageId);
  const field = pkg.manifest.config.find((f) => f.key === key);
  if (!field || field.disposition !== 'secret') {
    throw new MeshError(
      'secret_field_unknown',
      `${packageId} declares no secret field ${JSON.stringify(key)}`,
      { key },
    );
  }
  return field;
}

/** Captures the agent's own credential for a package's secret field. Returns metadata only. */
export async function captureAgentSecret(
  mesh: Mesh,
  agent: AgentRecord,
  packageId: string,
  key: string,
  value: string,
): Promise<SecretMetadata> {
  const field = secretField(mesh, packageId, key);
  return mesh.secrets.capture({
    ownerType: 'agent_tool',
    ownerId: agentToolOwnerId(agent.id, packageId),
    kind: field.kind,
    value,
  });
}

/** Revokes an agent's credential for a package's secret field. */
export async function retireAgentSecret(
  mesh: Mesh,
  agent: AgentRecord,
  packageId: string,
  key: string,
): Promise<boolean> {
  const field = secretField(mesh, packageId, key);
  return mesh.secrets.retire(
    { ownerType: 'agent_tool', ownerId: agentToolOwnerId(agent.id, packageId) },
    field.kind,
  );
}
