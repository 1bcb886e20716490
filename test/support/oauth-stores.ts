import { createGuardedFetch, type GuardedFetch } from '../../src/egress/guarded-fetch.ts';
import type { OAuthState, OAuthStateStore } from '../../src/mcp/oauth-state.ts';

/* An OAuth state store and a fetch that records, for the OAuth flow's tests. */

/** A store that keeps the state as JSON text, as the app keeps it in a secret. */
export function memoryStore(): OAuthStateStore & { text: string } {
  const store = {
    text: '{}',
    load: async (): Promise<OAuthState> => JSON.parse(store.text) as OAuthState,
    save: async (state: OAuthState) => {
      store.text = JSON.stringify(state);
    },
  };
  return store;
}

/** The guarded fetch, recording every request it is asked to make. */
export function recordingFetch(): { fetch: GuardedFetch; seen: string[] } {
  const guarded = createGuardedFetch({ allowLoopbackHttp: true });
  const seen: string[] = [];
  return {
    seen,
    fetch: (url, init) => {
      seen.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`);
      return guarded(url, init);
    },
  };
}
