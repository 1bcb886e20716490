import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { openServerWithAgent, type TestServer } from '../support/server.ts';

/*
 * Operator tokens through the API: minted with the value answered once, listed without it, used,
 * revoked, and refused once revoked.
 */
describe.each(testDatabases())('operator tokens through the API ($name)', (database) => {
  let server: TestServer;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ server, close } = await openServerWithAgent(database, 'ada'));
  });
  afterAll(async () => {
    await close();
  });

  it('mints, lists, uses and revokes a token; a revoked token is refused', async () => {
    const minted = await server.api('POST', '/api/tokens', { label: 'deploy bot' });
    expect(minted.status).toBe(201);
    const { token, id } = minted.json as { token: string; id: string };
    expect(token).toMatch(/^mesh_op_[A-Za-z0-9_-]{43}$/);

    const listed = await server.api('GET', '/api/tokens');
    expect(listed.text).not.toContain('mesh_op_');
    expect((listed.json as { tokens: { id: string; label: string }[] }).tokens).toEqual(
      expect.arrayContaining([expect.objectContaining({ id, label: 'deploy bot' })]),
    );

    expect((await server.api('GET', '/api/agents', undefined, { token })).status).toBe(200);
    const revoked = await server.api('DELETE', `/api/tokens/${id}`);
    expect(revoked.status, revoked.text).toBe(204);
    expect((await server.api('GET', '/api/agents', undefined, { token })).status).toBe(401);
    const again = await server.api('DELETE', `/api/tokens/${id}`);
    expect([again.status, (again.json as { error: { code: string } }).error.code]).toEqual([
      404,
      'token_not_found',
    ]);
  });

  it('refuses a blank label, a label too long and an id that is not one', async () => {
    for (const [body, field] of [
      [{ label: '   ' }, 'body.label'],
      [{ label: 'x'.repeat(101) }, 'body.label'],
      [{ colour: 'red' }, 'body.colour'],
    ] as const) {
      const refused = await server.api('POST', '/api/tokens', body);
      expect(refused.status).toBe(400);
      expect((refused.json as { error: { field: string } }).error.field).toBe(field);
    }
    const badId = await server.api('DELETE', '/api/tokens/not-a-uuid');
    expect(badId.status).toBe(400);
    expect((badId.json as { error: { field: string } }).error.field).toBe('path.id');
  });

  it('names a token for who holds it, and that name labels what it does', async () => {
    const minted = await server.api('POST', '/api/tokens', { name: 'grace' });
    expect(minted.status).toBe(201);
    const { token, id, label } = minted.json as { token: string; id: string; label: string };
    expect(label).toBe('grace');
    const sent = await server.api(
      'POST',
      '/api/agents/ada/messages',
      { body: 'hello from grace' },
      { token },
    );
    expect(sent.status).toBe(202);
    const { conversation_id } = sent.json as { conversation_id: string };
    const shown = await server.api('GET', `/api/conversations/${conversation_id}/messages`);
    const [first] = (shown.json as { messages: { actor: string }[] }).messages;
    expect(first?.actor).toBe(`operator:grace:${id.slice(0, 8)}`);
    // A name holds no separator of the actor it becomes.
    const refused = await server.api('POST', '/api/tokens', { name: 'grace:admin' });
    expect(refused.status).toBe(400);
    expect((refused.json as { error: { field: string } }).error.field).toBe('body.name');
  });
});
