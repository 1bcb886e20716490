import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { manualClock } from '../tool/clock.ts';
import { startFakeOAuth, type FakeOAuth } from '../../test/support/fake-oauth.ts';
import { memoryStore, recordingFetch } from '../../test/support/oauth-stores.ts';
import { hasCode, isMeshError } from '../tool/errors.ts';
import { createGuardedFetch, type GuardedFetch } from '../egress/guarded-fetch.ts';
import { accessToken, beginAuthorization, finishAuthorization } from './oauth.ts';
import {
  McpOAuthError,
  REFRESH_MARGIN_MS,
  type OAuthState,
  type OAuthStateStore,
} from './oauth-state.ts';
import { openMcpSession } from './session.ts';

const REDIRECT_URL = 'http://127.0.0.1:9/oauth/callback';

const fakes: FakeOAuth[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

async function fake(config: Parameters<typeof startFakeOAuth>[0] = {}): Promise<FakeOAuth> {
  const f = await startFakeOAuth({ clock, ...config });
  fakes.push(f);
  return f;
}

/** Plays the operator's browser: the fake approves at once and redirects with code and state. */
async function follow(authorizationUrl: URL, fetch: GuardedFetch) {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const callback = new URL(response.headers.get('location') ?? '');
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URL);
  return {
    code: callback.searchParams.get('code') ?? '',
    state: callback.searchParams.get('state') ?? '',
  };
}

/** Begins, follows and finishes an authorization. */
async function authorize(f: FakeOAuth, store: OAuthStateStore, fetch: GuardedFetch) {
  const flow = { serverUrl: f.mcpUrl, store, redirectUrl: REDIRECT_URL, fetch, clock };
  const { authorizationUrl } = await beginAuthorization(flow);
  const { code, state } = await follow(authorizationUrl, fetch);
  await finishAuthorization({ ...flow, code, state });
  return flow;
}

/** The clock both sides read: the client's token lifetimes and the fake server's expiry. */
let clock = manualClock(new Date());
beforeEach(() => {
  clock = manualClock(new Date());
});

/** Moves the clock both sides read forward by `ms`. */
function advanceClock(ms: number): void {
  clock.advance(ms);
}

/** What a promise rejected with. */
async function failure(promise: Promise<unknown>): Promise<McpOAuthError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(hasCode(error, McpOAuthError.code)).toBe(true);
  return error as McpOAuthError;
}

function expectNoSecret(message: string, f: FakeOAuth, state: OAuthState): void {
  const clientId = state.client?.['client_id'];
  const clientSecret = state.client?.['client_secret'];
  const basic =
    typeof clientId === 'string' && typeof clientSecret === 'string'
      ? Buffer.from(`${clientId}:${clientSecret}`).toString('base64')
      : undefined;
  const secrets = [
    ...f.issuedSecrets,
    basic,
    state.codeVerifier,
    state.pendingState,
    state.tokens?.access_token,
    state.tokens?.refresh_token,
  ].filter((s): s is string => s !== undefined);
  expect(secrets.length).toBeGreaterThan(0);
  for (const secret of secrets) expect(message).not.toContain(secret);
}

describe('OAuth for remote MCP', () => {
  it('authorizes with PKCE S256 and the resource, then an MCP session uses the token', async () => {
    const f = await fake();
    const store = memoryStore();
    const { fetch, seen } = recordingFetch();

    const flow = { serverUrl: f.mcpUrl, store, redirectUrl: REDIRECT_URL, fetch, clock };
    const { authorizationUrl } = await beginAuthorization(flow);
    expect(authorizationUrl.origin).toBe(f.issuer);
    const pending = await store.load();
    expect(pending.codeVerifier).toBeDefined();
    expect(pending.pendingState).toBe(authorizationUrl.searchParams.get('state'));
    expect(pending.client?.['client_id']).toEqual(expect.any(String));
    expect(f.registrations).toEqual([
      expect.objectContaining({ redirect_uris: [REDIRECT_URL], client_name: 'Mesh' }),
    ]);

    const { code, state } = await follow(authorizationUrl, fetch);
    await finishAuthorization({ ...flow, code, state });

    const [request] = f.authorizeRequests;
    expect(request?.get('code_challenge_method')).toBe('S256');
    expect(request?.get('resource')).toBe(f.mcpUrl);
    const exchange = f.tokenRequests.find(
      (r) => r.params.get('grant_type') === 'authorization_code',
    );
    expect(exchange?.outcome).toBe('issued');
    const verifier = exchange?.params.get('code_verifier') ?? '';
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(
      request?.get('code_challenge'),
    );
    expect(verifier).toBe(pending.codeVerifier);
    expect(exchange?.params.get('resource')).toBe(f.mcpUrl);

    const saved = await store.load();
    expect(saved.codeVerifier).toBeUndefined();
    expect(saved.pendingState).toBeUndefined();
    expect(saved.tokens?.refresh_token).toEqual(expect.any(String));
    expect(saved.tokens?.expires_at).toBeGreaterThan(clock.now().getTime() + 3590_000);
    expect(saved.tokens?.expires_at).toBeLessThanOrEqual(clock.now().getTime() + 3600_000);

    const session = await openMcpSession({
      url: f.mcpUrl,
      token: () => accessToken(flow),
      fetch,
    });
    try {
      const listing = await session.listTools();
      expect(listing.tools.map((t) => t.name)).toEqual(['whoami']);
      const result = await session.callTool('whoami', {});
      expect(result.content).toEqual([{ type: 'text', text: 'an authorized caller' }]);
    } finally {
      await session.close();
    }
    expect(f.mcpRequests.every((r) => r.token === saved.tokens?.access_token)).toBe(true);

    // Every request of the flow went through the guarded fetch.
    expect(seen).toEqual(
      expect.arrayContaining([
        'GET /.well-known/oauth-protected-resource/mcp',
        'GET /.well-known/oauth-authorization-server',
        'POST /register',
        'GET /authorize',
        'POST /token',
      ]),
    );
  });

  it('sends no request past the egress guard', async () => {
    const f = await fake();
    const store = memoryStore();
    const error: unknown = await beginAuthorization({
      serverUrl: f.mcpUrl,
      store,
      redirectUrl: REDIRECT_URL,
      fetch: createGuardedFetch(),
    }).catch((e: unknown) => e);
    expect(hasCode(error, 'egress_refused')).toBe(true);
    expect(f.registrations).toEqual([]);
    expect(f.authorizeRequests).toEqual([]);
  });

  it('refuses an authorization response whose state is not the pending one', async () => {
    const f = await fake();
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const flow = { serverUrl: f.mcpUrl, store, redirectUrl: REDIRECT_URL, fetch, clock };
    const { authorizationUrl } = await beginAuthorization(flow);
    const { code, state } = await follow(authorizationUrl, fetch);

    const forged = await failure(finishAuthorization({ ...flow, code, state: `${state}x` }));
    expect(forged.reason).toBe('state_mismatch');
    expect(forged.data).toEqual({ reason: 'state_mismatch' });
    expectNoSecret(forged.message, f, await store.load());
    expect(f.tokenRequests).toEqual([]);

    // The pending authorization survives a forged response; the real one still completes.
    await finishAuthorization({ ...flow, code, state });
    expect((await store.load()).tokens).toBeDefined();

    const none = await failure(finishAuthorization({ ...flow, code, state }));
    expect(none.reason).toBe('no_pending_authorization');
  });

  it.each([
    ['advertises only plain', ['plain']],
    ['advertises no methods at all', null],
  ])('refuses an authorization server that %s', async (_, methods) => {
    const f = await fake({ codeChallengeMethods: methods });
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const error = await failure(
      beginAuthorization({ serverUrl: f.mcpUrl, store, redirectUrl: REDIRECT_URL, fetch, clock }),
    );
    expect(error.reason).toBe('pkce_unsupported');
    expect(error.message).toContain('S256');
    expect(f.registrations).toEqual([]);
    expect(f.authorizeRequests).toEqual([]);
    expect(await store.load()).toEqual({});
  });

  it('refuses protected resource metadata naming another resource', async () => {
    const f = await fake({ prmResource: 'https://evil.example.com/mcp' });
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const error = await failure(
      beginAuthorization({ serverUrl: f.mcpUrl, store, redirectUrl: REDIRECT_URL, fetch, clock }),
    );
    expect(error.reason).toBe('resource_mismatch');
    expect(f.registrations).toEqual([]);
    expect(f.authorizeRequests).toEqual([]);
  });

  it('sends the canonical server URL as the resource when there is no resource metadata', async () => {
    const f = await fake({ protectedResourceMetadata: false });
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const flow = await authorize(f, store, fetch);
    expect(f.authorizeRequests[0]?.get('resource')).toBe(f.mcpUrl);
    expect(f.tokenRequests.map((r) => [r.params.get('resource'), r.outcome])).toEqual([
      [f.mcpUrl, 'issued'],
    ]);
    expect(await accessToken(flow)).toBe((await store.load()).tokens?.access_token);
  });

  it('refreshes an expiring token (with the resource) and the session uses the new one', async () => {
    const f = await fake();
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const flow = await authorize(f, store, fetch);
    const first = await store.load();
    const firstToken = first.tokens?.access_token;
    const expiresAt = first.tokens?.expires_at ?? 0;

    const session = await openMcpSession({ url: f.mcpUrl, token: () => accessToken(flow), fetch });
    try {
      await session.listTools();
      expect(f.tokenRequests).toHaveLength(1);

      // Just outside the margin: the token is still used as it is.
      advanceClock(expiresAt - clock.now().getTime() - REFRESH_MARGIN_MS - 5_000);
      expect(await accessToken(flow)).toBe(firstToken);
      expect(f.tokenRequests).toHaveLength(1);

      // Past its expiry the server no longer takes it; the next request refreshes first.
      advanceClock(expiresAt - clock.now().getTime() + 1_000);
      await session.listTools();
      const refreshRequest = f.tokenRequests[1];
      expect(refreshRequest?.params.get('grant_type')).toBe('refresh_token');
      expect(refreshRequest?.params.get('refresh_token')).toBe(first.tokens?.refresh_token);
      expect(refreshRequest?.params.get('resource')).toBe(f.mcpUrl);
      expect(refreshRequest?.outcome).toBe('issued');

      const second = await store.load();
      expect(second.tokens?.access_token).not.toBe(firstToken);
      expect(second.tokens?.refresh_token).not.toBe(first.tokens?.refresh_token);
      const last = f.mcpRequests.at(-1);
      expect(last).toEqual({ token: second.tokens?.access_token, status: 200 });
      expect(f.mcpRequests.some((r) => r.status === 401)).toBe(false);
    } finally {
      await session.close();
    }
  });

  it('refreshes once for concurrent callers (the rotated refresh token is used once)', async () => {
    const f = await fake({ accessTokenTtl: 30 });
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const flow = await authorize(f, store, fetch);
    const tokens = await Promise.all([accessToken(flow), accessToken(flow), accessToken(flow)]);
    expect(new Set(tokens).size).toBe(1);
    expect(f.tokenRequests.filter((r) => r.params.get('grant_type') === 'refresh_token')).toEqual([
      expect.objectContaining({ outcome: 'issued' }),
    ]);
    expect(tokens[0]).toBe((await store.load()).tokens?.access_token);
  });

  it('gives a typed error, without secrets, when the refresh is refused', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const f = await fake({ accessTokenTtl: 30, refuseRefresh: true });
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const flow = await authorize(f, store, fetch);
    const before = await store.load();

    const error = await failure(accessToken(flow));
    expect(error.reason).toBe('refresh_refused');
    expect(isMeshError(error)).toBe(true);
    expectNoSecret(error.message, f, before);
    expectNoSecret(JSON.stringify(error.toJSON()), f, before);
    for (const call of warn.mock.calls) expectNoSecret(call.map(String).join(' '), f, before);
    expect(f.tokenRequests.at(-1)?.outcome).toBe('invalid_grant');
    // The refused tokens are dropped and no authorization was started behind the caller's back.
    const after = await store.load();
    expect(after.tokens).toBeUndefined();
    expect(after.codeVerifier).toBeUndefined();
    expect(f.authorizeRequests).toHaveLength(1);
    expect(await accessToken(flow)).toBeUndefined();
  });

  it('keeps using a token not yet expired while the token endpoint is down', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const f = await fake({ accessTokenTtl: 30 });
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const flow = await authorize(f, store, fetch);
    const before = await store.load();
    f.config.tokenEndpointDown = true;

    // Within the margin the refresh fails, and the token that still works is returned.
    expect(await accessToken(flow)).toBe(before.tokens?.access_token);
    expect(f.tokenRequests.at(-1)).toEqual(expect.objectContaining({ outcome: 'server_error' }));

    // Once it has expired, the failure is the caller's, and the tokens stay for a later try.
    advanceClock(31_000);
    const error = await failure(accessToken(flow));
    expect(error.reason).toBe('refresh_failed');
    expectNoSecret(error.message, f, before);
    expect((await store.load()).tokens).toEqual(before.tokens);
    expect(f.authorizeRequests).toHaveLength(1);

    f.config.tokenEndpointDown = false;
    const refreshed = await accessToken(flow);
    expect(refreshed).not.toBe(before.tokens?.access_token);
    expect(f.tokenRequests.at(-1)?.outcome).toBe('issued');
  });

  it('names no code, verifier or secret when the token endpoint refuses the exchange', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const f = await fake({ leakyErrors: true });
    const store = memoryStore();
    const { fetch } = recordingFetch();
    const flow = { serverUrl: f.mcpUrl, store, redirectUrl: REDIRECT_URL, fetch, clock };

    // A verifier that does not match the challenge.
    const { authorizationUrl } = await beginAuthorization(flow);
    const { code, state } = await follow(authorizationUrl, fetch);
    const pending = await store.load();
    await store.save({ ...pending, codeVerifier: `${pending.codeVerifier ?? ''}tampered` });
    const badVerifier = await failure(finishAuthorization({ ...flow, code, state }));
    expect(badVerifier.reason).toBe('token_exchange_failed');
    expect(badVerifier.message).toContain('invalid_grant');
    expect(badVerifier.message).toContain('[redacted]');
    expectNoSecret(badVerifier.message, f, { ...pending, ...(await store.load()) });
    expect(f.tokenRequests.map((r) => r.outcome)).toContain('invalid_grant');

    // A code used twice.
    const again = await beginAuthorization(flow);
    const second = await follow(again.authorizationUrl, fetch);
    const snapshot = store.text;
    await finishAuthorization({ ...flow, ...second });
    store.text = snapshot;
    const reused = await failure(finishAuthorization({ ...flow, ...second }));
    expect(reused.reason).toBe('token_exchange_failed');
    expectNoSecret(reused.message, f, JSON.parse(snapshot) as OAuthState);
  });

  it('has no token to give before any authorization', async () => {
    const f = await fake();
    const { fetch } = recordingFetch();
    const flow = {
      serverUrl: f.mcpUrl,
      store: memoryStore(),
      redirectUrl: REDIRECT_URL,
      fetch,
      clock,
    };
    expect(await accessToken(flow)).toBeUndefined();
    expect(f.tokenRequests).toEqual([]);
  });
});
