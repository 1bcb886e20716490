import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { createAgent } from '../../src/app/agents/agents.ts';
import { finishOAuthConnection, startOAuthConnection } from '../../src/app/mcp/connections.ts';
import { credentialFor, expireOAuthToken } from '../../src/app/mcp/credentials.ts';
import { addToolProvider } from '../../src/app/mcp/providers.ts';
import { createGuardedFetch } from '../../src/egress/guarded-fetch.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import type { ToolProviderRecord } from '../../src/store/mcp.ts';
import { startFakeOAuth, type FakeOAuth } from '../support/fake-oauth.ts';
import { freshPostgresUrl } from '../support/postgres.ts';
import { testInstanceKey } from '../support/turn.ts';

/*
 * Two replicas (two Mesh objects, each with its own connections) on one PostgreSQL refresh the
 * same binding's expired access token at the same moment. The authorization server rotates
 * refresh tokens: one spent twice is refused, and the binding would need a new authorization.
 * The refresh is serialized across replicas, so it is spent once and both get the new token.
 */
describe.skipIf(!process.env['DATABASE_URL'])('OAuth refresh across replicas', () => {
  let oauth: FakeOAuth;
  let drop: () => Promise<void>;
  const dbs: Db[] = [];
  let a: Mesh;
  let b: Mesh;
  let agentId: string;
  let provider: ToolProviderRecord;

  beforeAll(async () => {
    oauth = await startFakeOAuth({ accessTokenTtl: 3600 });
    const fresh = await freshPostgresUrl();
    drop = () => fresh.drop();
    for (let i = 0; i < 2; i++) dbs.push(await openPostgres({ url: fresh.url }));
    const [dbA, dbB] = dbs as [Db, Db];
    await migrate(dbA);
    const key = testInstanceKey();
    a = assembleMesh(dbA, key);
    b = assembleMesh(dbB, key);
    agentId = (await createAgent(a, { name: 'ada' })).id;
    provider = await addToolProvider(a, {
      slug: 'secure',
      url: oauth.mcpUrl,
      allowLoopbackHttp: true,
    });
    const agent = { id: agentId, name: 'ada' } as Parameters<typeof startOAuthConnection>[1];
    const { authorizationUrl } = await startOAuthConnection(
      a,
      agent,
      'secure',
      'http://127.0.0.1:9',
    );
    const approved = await fetch(authorizationUrl, { redirect: 'manual' });
    const callback = new URL(approved.headers.get('location') ?? '');
    await finishOAuthConnection(a, agentId, provider.id, {
      code: callback.searchParams.get('code') ?? '',
      state: callback.searchParams.get('state') ?? '',
    });
  }, 60_000);

  afterAll(async () => {
    await oauth.close();
    for (const db of dbs) await db.close();
    await drop();
  });

  it('spends a rotating refresh token once when both replicas refresh at once', async () => {
    await expireOAuthToken(a, agentId, provider.id);
    oauth.config.tokenDelayMs = 150;
    const fetchFor = () => createGuardedFetch({ allowLoopbackHttp: true });
    const [fromA, fromB] = await Promise.all([
      credentialFor(a, agentId, provider, fetchFor()),
      credentialFor(b, agentId, provider, fetchFor()),
    ]);
    const refreshes = oauth.tokenRequests.filter(
      (r) => r.params.get('grant_type') === 'refresh_token',
    );
    expect(refreshes.map((r) => r.outcome)).toEqual(['issued']);
    expect(fromA).toBeDefined();
    expect(fromB).toBe(fromA);
    expect(oauth.issuedSecrets.has(fromA ?? '')).toBe(true);
  });
});
