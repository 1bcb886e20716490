import type { SecretMetadata } from '../../secrets/secret-store.ts';

/** What may be said about an agent's secret slot: presence and version, never the value. */
export interface SecretSlotView {
  readonly present: boolean;
  readonly version?: number;
  readonly createdAt?: Date;
}

/** A slot's view from its live metadata (undefined: nothing captured, or retired). */
export function secretSlotView(meta: SecretMetadata | undefined): SecretSlotView {
  return meta
    ? { present: true, version: meta.version, createdAt: meta.createdAt }
    : { present: false };
}
