import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { effectHarness, offerWithSecrets, type EffectHarness } from '../support/effect-harness.ts';
import { startSentryFake, type SentryFake } from '../support/sentry-fake.ts';

const TOKEN = 'sntryu_agentOwnToken0123456789abcdef';
const READ_ONLY = 'sntryu_readOnlyToken0123456789abcdef';

describe('mesh.sentry against the Sentry fake', () => {
  let fake: SentryFake;
  let h: EffectHarness;

  beforeAll(async () => {
    fake = await startSentryFake();
    fake.tokens.set(TOKEN, ['event:read', 'event:write', 'org:read']);
    fake.tokens.set(READ_ONLY, ['event:read', 'org:read']);
    h = await effectHarness('mesh.sentry', 'sentry_auth_token');
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    h.config = { api_url: fake.apiUrl, allow_loopback_http: true, organization: 'acme' };
    h.secret = TOKEN;
  });

  const requests = () => fake.received.map((r) => `${r.method} ${r.path}`);
  const puts = () => fake.received.filter((r) => r.method === 'PUT');

  it('lists issues, unresolved by default, with the filters it was given', async () => {
    const listed = await h.call('list_sentry_issues', {});
    expect(listed.kind).toBe('result');
    expect(listed.text).toMatch(
      /^API-1 \(id 1001\) TypeError: .* \[unresolved\] 132 events, 17 users/,
    );
    expect(listed.text).not.toContain('API-2');
    expect(fake.received[0]).toMatchObject({
      method: 'GET',
      path: '/organizations/acme/issues/',
      params: { query: 'is:unresolved', limit: '10' },
      authorized: true,
    });

    await h.call('list_sentry_issues', {
      query: 'is:resolved ECONNREFUSED',
      project: 42,
      environment: 'production',
      stats_period: '14d',
      limit: 5,
    });
    expect(fake.received[1]?.params).toEqual({
      query: 'is:resolved ECONNREFUSED',
      limit: '5',
      project: '42',
      environment: 'production',
      statsPeriod: '14d',
    });
  });

  it('reads an issue by short id (resolved through /shortids/) and by numeric id', async () => {
    const byShort = await h.call('get_sentry_issue', { issue: 'API-1' });
    expect(byShort.kind).toBe('result');
    expect(byShort.text).toContain(
      'Culprit: listOrders(src/orders/list); level error; project api.',
    );
    expect(byShort.text).toContain('assigned to nobody');
    expect(requests()).toEqual([
      'GET /organizations/acme/shortids/API-1/',
      'GET /organizations/acme/issues/1001/',
    ]);
    fake.received.length = 0;
    const byId = await h.call('get_sentry_issue', { issue: '1002' });
    expect(byId.text).toMatch(/^API-2 \(id 1002\) Error: connect ECONNREFUSED/);
    expect(requests()).toEqual(['GET /organizations/acme/issues/1002/']);
  });

  it('excerpts the latest event: message, exception, top in-app frames first, tags', async () => {
    const event = await h.call('get_sentry_latest_event', { issue: 'API-1' });
    expect(event.kind).toBe('result');
    expect(requests().at(-1)).toBe('GET /organizations/acme/issues/1001/events/latest/');
    const lines = event.text.split('\n');
    expect(lines).toContain(
      "Exception TypeError: Cannot read properties of undefined (reading 'map')",
    );
    const frames = lines.filter((l) => l.trimStart().startsWith('at '));
    expect(frames).toEqual([
      '    at listOrders (src/orders/list.ts:42:23)',
      '    at handle (src/routes/orders.ts:18:10)',
    ]);
    expect(event.text).toContain('      > return rows.items.map(toView);');
    expect(event.text).toContain('Tags: environment=production, release=api@1.4.2');
    expect(event.text).toContain('(release api@1.4.2)');
  });

  it('resolves an issue once, recorded as a reconciling delivery', async () => {
    const callId = randomUUID();
    const resolved = await h.call('resolve_sentry_issue', { issue: 'API-1' }, { callId, step: 4 });
    expect(resolved.kind).toBe('result');
    expect(resolved.text).toBe('Marked API-1 resolved: https://acme.sentry.io/issues/1001/');
    expect(puts()).toEqual([
      expect.objectContaining({
        path: '/organizations/acme/issues/1001/',
        body: { status: 'resolved' },
      }),
    ]);
    expect(fake.issues.get('1001')?.status).toBe('resolved');
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event).toMatchObject({
      kind: 'sentry.issue_resolve',
      target: 'issue API-1',
      state: 'delivered',
      attempts: 1,
      externalId: '1001',
      reconciles: true,
    });
    // Settled again (a resumed run): the recorded delivery, nothing sent.
    const again = await h.call('resolve_sentry_issue', { issue: 'API-1' }, { callId, step: 4 });
    expect(again.text).toContain('not sent again');
    expect(puts()).toHaveLength(1);

    await h.call('resolve_sentry_issue', { issue: '1002', in_next_release: true });
    expect(puts()[1]?.body).toEqual({ status: 'resolvedInNextRelease' });
    expect(fake.issues.get('1002')?.statusDetails).toEqual({ inNextRelease: true });
  });

  it('assigns by user id and by email; an unknown assignee is Sentry’s refusal', async () => {
    const byId = await h.call('assign_sentry_issue', { issue: 'API-1', assignee: 'user:7' });
    expect(byId.text).toMatch(/^Assigned API-1 to Mesh Agent \(user:7\): https/);
    expect(puts()[0]?.body).toEqual({ assignedTo: 'user:7' });
    const byEmail = await h.call('assign_sentry_issue', {
      issue: 'API-1',
      assignee: 'dana@example.com',
    });
    expect(byEmail.text).toContain('to Dana Ops (user:8)');
    expect(fake.issues.get('1001')?.assignedTo?.id).toBe('8');

    const unknown = await h.call('assign_sentry_issue', { issue: 'API-1', assignee: 'team:99' });
    expect(unknown.kind).toBe('tool_error');
    expect(unknown.text).toContain('assignedTo: Unknown actor input');
    expect(puts()).toHaveLength(3);
    expect((await h.events()).map((e) => [e.kind, e.state])).toEqual(
      expect.arrayContaining([
        ['sentry.issue_assign', 'delivered'],
        ['sentry.issue_assign', 'failed'],
      ]),
    );
  });

  it('retries a 429 honouring Retry-After, and a 503 after reading the issue back', async () => {
    fake.failures.push('ratelimited', 'unavailable');
    const observation = await h.call('resolve_sentry_issue', { issue: '1001' });
    expect(observation.kind).toBe('result');
    expect(h.delays.slice(-2)).toEqual([2000, 500]);
    expect(requests()).toEqual([
      'GET /organizations/acme/issues/1001/',
      'PUT /organizations/acme/issues/1001/',
      'PUT /organizations/acme/issues/1001/',
      // After the 503 the issue was read back: not resolved, so it was sent again.
      'GET /organizations/acme/issues/1001/',
      'PUT /organizations/acme/issues/1001/',
    ]);
  });

  it('a resolve whose answer was lost is reconciled by reading the issue: sent once', async () => {
    fake.failures.push('lost');
    const callId = randomUUID();
    const observation = await h.call('resolve_sentry_issue', { issue: 'API-1' }, { callId });
    expect(observation.kind).toBe('result');
    expect(puts()).toHaveLength(1);
    expect(requests().at(-1)).toBe('GET /organizations/acme/issues/1001/');
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event).toMatchObject({ state: 'delivered', attempts: 1, externalId: '1001' });
  });

  it('an assignment whose connection dropped is reconciled by the assignee: sent once', async () => {
    fake.failures.push('dropped');
    const observation = await h.call('assign_sentry_issue', { issue: 'API-1', assignee: 'team:3' });
    expect(observation.kind).toBe('result');
    expect(observation.text).toContain('to backend (team:3)');
    expect(puts()).toHaveLength(1);
    expect(fake.issues.get('1001')?.assignedTo?.type).toBe('team');
  });

  it('a wrong token is an observation naming the secret, without the token; nothing is sent', async () => {
    h.secret = 'sntryu_revoked0123456789abcdef';
    for (const [tool, args] of [
      ['list_sentry_issues', {}],
      ['resolve_sentry_issue', { issue: 'API-1' }],
    ] as const) {
      const observation = await h.call(tool, args);
      expect(observation.kind).toBe('tool_error');
      expect(observation.text).toContain('capture a valid sentry_auth_token');
      expect(observation.text).not.toContain(h.secret);
    }
    expect(fake.received.every((r) => !r.authorized)).toBe(true);
    expect(puts()).toHaveLength(0);
  });

  it('a token without event:write is refused once (403), naming the scope', async () => {
    h.secret = READ_ONLY;
    const observation = await h.call('resolve_sentry_issue', { issue: 'API-1' });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toContain('event:write or event:admin');
    expect(puts()).toHaveLength(1);
    expect(fake.issues.get('1001')?.status).toBe('unresolved');
  });

  it('an unknown issue names which one; bad arguments name the field, not the value', async () => {
    const missing = await h.call('get_sentry_issue', { issue: 'API-99' });
    expect(missing.kind).toBe('tool_error');
    expect(missing.text).toContain('no issue API-99 in organization acme');
    const noEvent = await h.call('get_sentry_latest_event', { issue: 'API-2' });
    expect(noEvent.text).toContain('no event for issue API-2');

    fake.received.length = 0;
    const bad = await h.call('assign_sentry_issue', { issue: 'API-1', assignee: 'two words' });
    expect(bad.kind).not.toBe('result');
    expect(bad.text).toContain('assignee');
    expect(bad.text).not.toContain('two words');
    expect(fake.received).toEqual([]);
  });

  it('refuses plain http unless allow_loopback_http is on, and needs the organization', async () => {
    h.config = { api_url: fake.apiUrl, organization: 'acme' };
    const http = await h.call('list_sentry_issues', {});
    expect(http.text).toContain('`api_url` must be an https URL');
    expect(http.text).toContain('`allow_loopback_http`');
    h.config = { api_url: fake.apiUrl, allow_loopback_http: true };
    const noOrg = await h.call('list_sentry_issues', {});
    expect(noOrg.text).toContain('the setting `organization` is not set');
    expect(fake.received).toEqual([]);
  });

  it('reaches Sentry only through the guarded fetch: metadata and private addresses are refused', async () => {
    for (const [apiUrl, what] of [
      ['https://169.254.169.254', /refused 169\.254\.169\.254: .*link-local/],
      ['https://10.20.30.40/api/0', /refused 10\.20\.30\.40: .*private/],
    ] as const) {
      h.config = { api_url: apiUrl, organization: 'acme' };
      const refused = await h.call('list_sentry_issues', {});
      expect(refused.text).toMatch(what);
    }
    // Loopback https too, without the development setting.
    h.config = { api_url: fake.apiUrl.replace('http:', 'https:'), organization: 'acme' };
    expect((await h.call('list_sentry_issues', {})).text).toMatch(
      /refused 127\.0\.0\.1: .*loopback/,
    );
    expect(fake.received).toEqual([]);
  });

  it('an agent without the token is not offered the tools, with the reason', () => {
    const { registry: offered, withheld } = offerWithSecrets();
    expect(offered.names().filter((n) => n.includes('sentry'))).toEqual([]);
    for (const name of ['list_sentry_issues', 'resolve_sentry_issue', 'assign_sentry_issue'])
      expect(withheld.find((w) => w.name === name)?.reason).toBe(
        'needs secret sentry_auth_token, not captured for this agent',
      );
  });
});
