import { createOutbox } from '../../outbound/outbox.ts';
import type { OutboundStore } from '../../outbound/records.ts';
import { outboundStore } from '../../store/outbound-events.ts';
import { OUTBOX, type Outbox } from '../../tool/outbound.ts';
import { noRedaction, type Redactor } from '../../tool/redaction.ts';
import type { MeshServiceFactory } from '../service-host.ts';

/**
 * The outbound store with held secrets removed from what a vendor answered before it is kept:
 * an attempt's error (a vendor's error text may quote the token it was sent) and a receipt.
 */
function redactingStore(store: OutboundStore, redactor: Redactor): OutboundStore {
  return {
    ...store,
    delivered: (id, receipt, defer) =>
      store.delivered(
        id,
        {
          externalId: redactor.text(receipt.externalId),
          link: receipt.link === null ? null : redactor.text(receipt.link),
          result: receipt.result === null ? null : redactor.json(receipt.result),
        },
        defer,
      ),
    retryLater: (id, error) => store.retryLater(id, redactor.text(error)),
    failed: (id, error) => store.failed(id, redactor.text(error)),
    unknown: (id, error) => store.unknown(id, redactor.text(error)),
  };
}

/** The outbound machinery for effect tools (`service:mesh.outbound`), over `outbound_events`. */
export const outboxService: MeshServiceFactory<Outbox> = {
  key: OUTBOX,
  create: (host) =>
    createOutbox({ store: redactingStore(outboundStore(host.db), host.redactor ?? noRedaction) }),
};
