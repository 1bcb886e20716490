import type { OutboundEventRecord } from '../../outbound/records.ts';
import { outboundStore } from '../../store/outbound-events.ts';
import type { Mesh } from '../mesh.ts';

/** A run's effects, in the order they were recorded: what `mesh runs show` and the API show. */
export function runEffects(
  mesh: Pick<Mesh, 'db'>,
  runId: string,
): Promise<readonly OutboundEventRecord[]> {
  return outboundStore(mesh.db).forRun(runId);
}
