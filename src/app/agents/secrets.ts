import type { SecretMetadata } from '../../secrets/secret-store.ts';
import { agentToolOwnerId } from '../../secrets/secret-input.ts';
import type { AgentRecord } from '../../run/records.ts';
import { MeshError } from '../../tool/errors.ts';
import { lifecycleStore } from '../../store/lifecycle.ts';
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

/**
 * Captures the agent's own credential for a package's secret field. Returns metadata only. For
 * an enabled install of a package with an `on_secret_capture` hook this is a rotation: the hook
 * is run against the new value first (through the lifecycle executor), and the value is stored
 * only if it accepts it; otherwise the version in use stays and the refusal names why.
 */
export async function captureAgentSecret(
  mesh: Mesh,
  agent: AgentRecord,
  packageId: string,
  key: string,
  value: string,
  actor: string,
): Promise<SecretMetadata> {
  const field = secretField(mesh, packageId, key);
  const owner = {
    ownerType: 'agent_tool' as const,
    ownerId: agentToolOwnerId(agent.id, packageId),
  };
  const pkg = requirePackage(mesh, packageId);
  if (pkg.manifest.hooks.on_secret_capture !== undefined) {
    const install = await lifecycleStore(mesh.db).findInstall(agent.id, packageId);
    if (install?.state === 'enabled') {
      const { lifecycleOf } = await import('../packages/installs.ts');
      const rotated = await lifecycleOf(mesh).request({
        agentId: agent.id,
        packageId,
        action: 'rotate',
        actor,
        candidate: { kind: field.kind, value },
      });
      const stored = await mesh.secrets.describeOne(owner, field.kind);
      if (rotated.transition?.outcome !== 'succeeded' || !stored)
        throw new MeshError(
          'secret_refused',
          `${packageId} refused the new ${field.kind} (${rotated.transition?.error ?? 'its rotation did not finish'}); the version in use stays`,
          { key },
        );
      return stored;
    }
  }
  return mesh.secrets.capture({ ...owner, kind: field.kind, value });
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
