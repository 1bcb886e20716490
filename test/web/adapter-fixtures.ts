import { expect } from 'vitest';
import { createQueryProviderAdapter } from '../../src/web/adapters/index.ts';
import {
  isQueryProviderError,
  type QueryProviderAdapter,
  type QueryProviderConfig,
  type QueryProviderError,
  type QueryProviderKind,
} from '../../src/web/provider.ts';
import { manualClock } from '../../src/tool/clock.ts';
import type { WebFake } from '../support/web-fakes/index.ts';

/* What the query-adapter tests share: the key the fakes accept, the clock, the adapter built. */

/** The key every contract fake accepts. */
export const KEY = 'mesh-contract-key-9d41c7';

/** The adapters' clock: recency windows are measured from it. */
export const CONTRACT_NOW = new Date('2024-06-15T12:00:00.000Z');

/** A config for `fake`, with the contract's key. */
export function configFor(
  fake: WebFake,
  overrides: Partial<QueryProviderConfig> = {},
): QueryProviderConfig {
  return {
    baseUrl: fake.baseUrl,
    apiKey: KEY,
    settings: fake.settings,
    timeoutMs: 5_000,
    // The fakes listen on loopback: the development setting lets the guarded fetch reach them.
    allowLoopbackHttp: true,
    ...overrides,
  };
}

export function adapterFor(
  kind: QueryProviderKind,
  fake: WebFake,
  overrides: Partial<QueryProviderConfig> = {},
): QueryProviderAdapter {
  return createQueryProviderAdapter(kind, configFor(fake, overrides), {
    clock: manualClock(CONTRACT_NOW),
  });
}

/** The QueryProviderError `promise` rejects with (failing the test if it does not). */
export async function failureOf(promise: Promise<unknown>): Promise<QueryProviderError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isQueryProviderError(error), `expected a QueryProviderError, got ${String(error)}`).toBe(
    true,
  );
  return error as QueryProviderError;
}
