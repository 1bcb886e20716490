import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { datadogSettings } from '../../tools/datadog/settings.ts';
import { startDatadogFake, type DatadogFake } from '../support/datadog-fake.ts';
import { effectHarness, offerWithSecrets, type EffectHarness } from '../support/effect-harness.ts';

const API_KEY = 'dd0123456789abcdef0123456789abcd';
const APP_KEY = 'ddapp0123456789abcdef0123456789abcdef0123';

describe('mesh.datadog against the Datadog fake, through the real SDK', () => {
  let fake: DatadogFake;
  let h: EffectHarness;

  beforeAll(async () => {
    fake = await startDatadogFake();
    fake.apiKeys.add(API_KEY);
    fake.appKeys.add(APP_KEY);
    h = await effectHarness('mesh.datadog', 'datadog_api_key');
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    h.config = { api_url: fake.url, allow_loopback_http: true };
    h.secret = API_KEY;
    h.secrets = { datadog_application_key: APP_KEY };
  });

  const requests = (method: string, path: string) =>
    fake.received.filter((r) => r.method === method && r.path === path);

  it('queries metrics with both keys and summarizes each series', async () => {
    const observation = await h.call('query_datadog_metrics', {
      query: 'avg:system.cpu.user{*} by {host}',
      from: 'now-2h',
    });
    expect(observation.kind).toBe('result');
    expect(observation.text).toContain(
      'avg:system.cpu.user{host:web-1} [host:web-1]: 3 points, min 10, max 13, last 13 percent',
    );
    expect(observation.text).toContain('[host:web-2]: 3 points, min 20, max 23, last 23');
    const [request] = requests('GET', '/api/v1/query');
    expect(request).toMatchObject({ apiKeyOk: true, appKeyOk: true });
    expect(request?.query['query']).toBe('avg:system.cpu.user{*} by {host}');
    const from = Number(request?.query['from']);
    const to = Number(request?.query['to']);
    expect(to - from).toBe(7200);
    expect(Math.abs(to - Date.now() / 1000)).toBeLessThan(60);
  });

  it('a query Datadog cannot parse comes back with its reason (400)', async () => {
    const observation = await h.call('query_datadog_metrics', { query: 'cpu please' });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toBe(
      'Datadog refused the metrics query as invalid (HTTP 400): Error parsing query: unable to parse the query.',
    );
  });

  it('searches logs newest first, with a capped limit and message excerpts', async () => {
    const observation = await h.call('search_datadog_logs', {
      query: 'status:error',
      from: 'now-1h',
      limit: 2,
    });
    expect(observation.kind).toBe('result');
    const lines = observation.text.split('\n');
    expect(lines[0]).toMatch(/^\S+Z error api \(web-0\): upstream timeout x+…$/);
    expect(lines[0]?.length).toBeLessThan(400);
    expect(lines[1]).toMatch(/ error worker \(web-1\): request 1 done$/);
    expect(lines[2]).toBe('More logs match; narrow the query or the window.');
    const [request] = requests('POST', '/api/v2/logs/events/search');
    expect(request?.body).toMatchObject({
      filter: { query: 'status:error' },
      sort: '-timestamp',
      page: { limit: 2 },
    });
    const filter = (request?.body as { filter: { from: string; to: string } }).filter;
    expect(Date.parse(filter.to) - Date.parse(filter.from)).toBe(3_600_000);
  });

  it('lists monitors by name and tags, with state and whether muted', async () => {
    const observation = await h.call('list_datadog_monitors', {
      name: 'latency',
      monitor_tags: ['service:api', 'team:sre'],
    });
    expect(observation.text).toBe('#101 API p99 latency high [Alert] (metric alert)');
    expect(requests('GET', '/api/v1/monitor')[0]?.query).toMatchObject({
      name: 'latency',
      monitor_tags: 'service:api,team:sre',
      with_downtimes: 'true',
    });
  });

  it('posts an event once, tagged with our key, and a resumed call sends nothing', async () => {
    const callId = randomUUID();
    const args = {
      title: 'Deploy of api finished',
      text: 'v1.2.3 is live',
      tags: ['service:api'],
      alert_type: 'success',
    };
    const observation = await h.call('post_datadog_event', args, { callId, step: 4 });
    expect(observation.kind).toBe('result');
    expect(observation.text).toMatch(
      /^Posted Datadog event 5000000001 "Deploy of api finished": https:\/\/app\.datadoghq\.com\/event\/event\?id=5000000001$/,
    );
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event).toMatchObject({
      kind: 'datadog.event_create',
      state: 'delivered',
      attempts: 1,
      externalId: '5000000001',
      reconciles: true,
    });
    expect(fake.events).toHaveLength(1);
    expect(fake.events[0]).toMatchObject({
      title: 'Deploy of api finished',
      alert_type: 'success',
    });
    expect(fake.events[0]?.tags).toEqual([
      'service:api',
      `mesh_key:${event?.idempotencyKey.slice(0, 16)}`,
    ]);

    const again = await h.call('post_datadog_event', args, { callId, step: 4 });
    expect(again.text).toContain('not sent again');
    expect(requests('POST', '/api/v1/events')).toHaveLength(1);
  });

  it('retries a rate limit after X-RateLimit-Reset, then posts once', async () => {
    fake.failures.push('ratelimited');
    const observation = await h.call('post_datadog_event', { title: 't', text: 'x' });
    expect(observation.kind).toBe('result');
    expect(requests('POST', '/api/v1/events')).toHaveLength(2);
    expect(fake.events).toHaveLength(1);
    expect(h.delays.at(-1)).toBe(2000);
  });

  it('an event whose answer was lost after Datadog posted it is found by its tag: once', async () => {
    fake.failures.push('lost');
    const observation = await h.call('post_datadog_event', { title: 'Once', text: 'only' });
    expect(observation.kind).toBe('result');
    expect(fake.events).toHaveLength(1);
    expect(requests('POST', '/api/v1/events')).toHaveLength(1);
    const [lookup] = requests('GET', '/api/v1/events');
    expect(lookup?.query['tags']).toBe(fake.events[0]?.tags[0]);
    expect(lookup).toMatchObject({ apiKeyOk: true, appKeyOk: true });
  });

  it('an event not found after a dropped connection is reported unknown, never re-posted', async () => {
    fake.failures.push('dropped');
    const callId = randomUUID();
    const observation = await h.call('post_datadog_event', { title: 'x', text: 'y' }, { callId });
    expect(observation.kind).toBe('unknown_outcome');
    expect(observation.text).toContain('Whether posting the Datadog event happened is unknown');
    expect(requests('POST', '/api/v1/events')).toHaveLength(1);
    expect(requests('GET', '/api/v1/events')).toHaveLength(1);
    expect(fake.events).toHaveLength(0);
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event?.state).toBe('unknown');
  });

  it('mutes a monitor with a downtime scoped to it, ending after the minutes given', async () => {
    const callId = randomUUID();
    const observation = await h.call(
      'mute_datadog_monitor',
      { monitor_id: 101, duration_minutes: 30, scope: 'env:prod', message: 'deploying' },
      { callId },
    );
    expect(observation.kind).toBe('result');
    expect(fake.downtimes).toHaveLength(1);
    const [downtime] = fake.downtimes;
    const end = new Date(downtime?.end ?? '').toISOString();
    expect(observation.text).toBe(
      `Muted monitor 101 (API p99 latency high) for scope env:prod until ${end} ` +
        `(downtime ${downtime?.id}): https://app.datadoghq.com/monitors/101`,
    );
    const minutes = (Date.parse(downtime?.end ?? '') - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(29);
    expect(minutes).toBeLessThanOrEqual(30);
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event).toMatchObject({ kind: 'datadog.monitor_mute', state: 'delivered' });
    expect(downtime?.message).toBe(`deploying\n\nmesh_key:${event?.idempotencyKey.slice(0, 16)}`);
    const [request] = requests('POST', '/api/v2/downtime');
    expect(request?.body).toMatchObject({
      data: {
        type: 'downtime',
        attributes: { monitor_identifier: { monitor_id: 101 }, scope: 'env:prod' },
      },
    });
    // The monitor was read first (it exists), and now lists as muted.
    expect(fake.received[0]).toMatchObject({ method: 'GET', path: '/api/v1/monitor/101' });
    const listed = await h.call('list_datadog_monitors', {});
    expect(listed.text).toContain('#101 API p99 latency high [Alert] (metric alert) muted');
    expect(listed.text).toMatch(/#102 Disk almost full \[OK\] \(metric alert\)$/);
  });

  it('a mute whose answer was lost is found by our key; one that was not made is sent again', async () => {
    fake.failures.push('lost');
    const lost = await h.call('mute_datadog_monitor', { monitor_id: 102, duration_minutes: 5 });
    expect(lost.kind).toBe('result');
    expect(fake.downtimes).toHaveLength(1);
    expect(requests('POST', '/api/v2/downtime')).toHaveLength(1);
    expect(requests('GET', '/api/v2/downtime')[0]?.query).toMatchObject({
      current_only: 'true',
      'page[limit]': '100',
    });

    fake.reset();
    fake.failures.push('internal');
    const retried = await h.call('mute_datadog_monitor', { monitor_id: 102, duration_minutes: 5 });
    expect(retried.kind).toBe('result');
    expect(fake.downtimes).toHaveLength(1);
    expect(fake.received.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/monitor/102',
      'POST /api/v2/downtime',
      'GET /api/v2/downtime',
      'POST /api/v2/downtime',
    ]);
  });

  it('muting a monitor that does not exist is refused before anything is sent', async () => {
    const observation = await h.call('mute_datadog_monitor', {
      monitor_id: 999,
      duration_minutes: 5,
    });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toContain('Datadog has no monitor 999');
    expect(requests('POST', '/api/v2/downtime')).toHaveLength(0);
  });

  it('wrong keys are an observation naming both secrets, never their values; not retried', async () => {
    h.secrets = { datadog_application_key: 'ddapp-revoked-0123456789abcdef' };
    const read = await h.call('list_datadog_monitors', {});
    expect(read.kind).toBe('tool_error');
    expect(read.text).toContain('capture a valid datadog_api_key and datadog_application_key');
    expect(read.text).not.toContain('ddapp-revoked');

    h.secret = 'dd-revoked-api-key-0123456789';
    const callId = randomUUID();
    const post = await h.call('post_datadog_event', { title: 't', text: 'x' }, { callId });
    expect(post.kind).toBe('tool_error');
    expect(post.text).toContain('datadog_api_key');
    expect(post.text).not.toContain(h.secret);
    expect(requests('POST', '/api/v1/events')).toHaveLength(1);
    expect(fake.events).toHaveLength(0);
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event).toMatchObject({ state: 'failed', attempts: 1 });
  });

  it('bad arguments are typed errors naming the field, without the value', async () => {
    const window = await h.call('search_datadog_logs', {
      query: '*',
      from: 'now-1m',
      to: 'now-1h',
    });
    expect(window.text).toBe('search_datadog_logs: `from` must be before `to`.');
    const tag = await h.call('post_datadog_event', {
      title: 't',
      text: 'x',
      tags: ['mesh_key:forged'],
    });
    expect(tag.text).toContain('`tags` may not hold a mesh_key: tag');
    expect(tag.text).not.toContain('forged');
    const alert = await h.call('post_datadog_event', {
      title: 't',
      text: 'x',
      alert_type: 'catastrophe',
    });
    expect(alert.kind).not.toBe('result');
    expect(alert.text).toContain('alert_type');
    expect(alert.text).not.toContain('catastrophe');
    expect(fake.received).toEqual([]);
  });

  it('refuses plain http unless allow_loopback_http is on; the site names the API root', async () => {
    h.config = { api_url: fake.url };
    const observation = await h.call('list_datadog_monitors', {});
    expect(observation.text).toContain('`api_url` must be an https URL');
    expect(observation.text).toContain('`allow_loopback_http`');
    expect(fake.received).toEqual([]);
    expect(datadogSettings({ site: 'datadoghq.eu' })).toEqual({
      ok: true,
      settings: {
        apiUrl: 'https://api.datadoghq.eu',
        appUrl: 'https://app.datadoghq.eu',
        site: 'datadoghq.eu',
      },
    });
    expect(datadogSettings({ site: 'us3.datadoghq.com' })).toMatchObject({
      settings: { apiUrl: 'https://api.us3.datadoghq.com', appUrl: 'https://us3.datadoghq.com' },
    });
  });

  it('an agent without both keys is not offered the tools, with the reason', () => {
    const none = offerWithSecrets();
    expect(none.registry.names().filter((n) => n.includes('datadog'))).toEqual([]);
    expect(none.withheld.find((w) => w.name === 'post_datadog_event')?.reason).toBe(
      'needs secret datadog_api_key, not captured for this agent',
    );
    const apiOnly = offerWithSecrets(new Map([['mesh.datadog', new Set(['datadog_api_key'])]]));
    expect(apiOnly.registry.names().filter((n) => n.includes('datadog'))).toEqual([]);
    expect(apiOnly.withheld.find((w) => w.name === 'query_datadog_metrics')?.reason).toBe(
      'needs secret datadog_application_key, not captured for this agent',
    );
  });
});
