import { createOutbox } from '../outbound/outbox.ts';
import { outboundStore } from '../store/outbound-events.ts';
import { OUTBOX, type Outbox } from '../tool/outbound.ts';
import type { MeshServiceFactory } from './service-factories.ts';

/** The outbound machinery for effect tools (`service:mesh.outbound`), over `outbound_events`. */
export const outboxService: MeshServiceFactory<Outbox> = {
  key: OUTBOX,
  create: (host) => createOutbox({ store: outboundStore(host.db) }),
};
