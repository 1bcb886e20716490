import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { effectHarness, offerWithSecrets, type EffectHarness } from '../support/effect-harness.ts';
import { startSlackFake, type SlackFake } from '../support/slack-fake.ts';

const TOKEN = 'xoxb-agent-own-token-0123456789';

describe('mesh.slack against the Slack fake', () => {
  let fake: SlackFake;
  let h: EffectHarness;

  beforeAll(async () => {
    fake = await startSlackFake();
    fake.tokens.add(TOKEN);
    h = await effectHarness('mesh.slack', 'slack_token');
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    h.config = { api_url: fake.apiUrl, allow_loopback_http: true };
    h.secret = TOKEN;
  });

  const posts = () => fake.received.filter((r) => r.method === 'chat.postMessage');

  it('posts once as the agent, with our key in the message metadata', async () => {
    const callId = randomUUID();
    const observation = await h.call(
      'post_slack_message',
      { channel: '#ops', text: 'Deploy is failing: ENG-1' },
      { callId, step: 3 },
    );
    expect(observation.kind).toBe('result');
    expect(observation.text).toMatch(/^Posted to #ops \(message ts \d+\.000100\)\.$/);
    expect(fake.posted).toHaveLength(1);
    expect(fake.posted[0]).toMatchObject({
      channel: 'C0OPS00001',
      text: 'Deploy is failing: ENG-1',
    });
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event).toMatchObject({
      kind: 'slack.chat_post_message',
      target: 'channel #ops',
      state: 'delivered',
      attempts: 1,
      externalId: `C0OPS00001/${fake.posted[0]?.ts}`,
      reconciles: false,
    });
    expect(fake.posted[0]?.metadata).toEqual({
      event_type: 'mesh_outbound_effect',
      event_payload: { key: event?.idempotencyKey },
    });

    // Settled again (a resumed run): the recorded delivery, nothing posted.
    await h.call('post_slack_message', { channel: '#ops', text: 'x' }, { callId, step: 3 });
    expect(fake.posted).toHaveLength(1);
  });

  it('retries a rate limit and service_unavailable, then posts once', async () => {
    fake.failures.push('ratelimited', 'unavailable');
    const observation = await h.call('post_slack_message', { channel: 'ops', text: 'hi' });
    expect(observation.kind).toBe('result');
    expect(posts()).toHaveLength(3);
    expect(fake.posted).toHaveLength(1);
    expect(h.delays.slice(-2)).toEqual([0, 500]);
  });

  it('an answer lost after Slack may have posted is reported unknown, never re-posted', async () => {
    fake.failures.push('lost');
    const callId = randomUUID();
    const observation = await h.call(
      'post_slack_message',
      { channel: '#ops', text: 'once' },
      { callId },
    );
    expect(observation.kind).toBe('unknown_outcome');
    expect(observation.text).toContain('Whether posting the message to #ops happened is unknown');
    expect(fake.posted).toHaveLength(1);
    expect(posts()).toHaveLength(1);
    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event?.state).toBe('unknown');
  });

  it('a channel the agent is not in is a terminal failure naming the fix', async () => {
    const observation = await h.call('post_slack_message', {
      channel: '#private-stuff',
      text: 'x',
    });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toContain('not a member of #private-stuff');
    expect(observation.text).toContain('invite it');
    expect(posts()).toHaveLength(1);
  });

  it('a wrong token is an observation naming the fix, without the token; not retried', async () => {
    h.secret = 'xoxb-revoked-token-0123456789';
    const observation = await h.call('post_slack_message', { channel: '#ops', text: 'x' });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toContain('capture a valid slack_token');
    expect(observation.text).not.toContain(h.secret);
    expect(posts()).toHaveLength(1);
    expect(posts()[0]?.authorized).toBe(false);
    expect(fake.posted).toHaveLength(0);
  });

  it('refuses a non-https api_url, naming the setting', async () => {
    h.config = { api_url: 'http://slack.example.com/api', allow_loopback_http: true };
    const observation = await h.call('post_slack_message', { channel: '#ops', text: 'x' });
    expect(observation.text).toContain('`api_url` must be an https URL');
    expect(fake.received).toEqual([]);
  });

  it('reaches Slack only through the guarded fetch: metadata, private and loopback are refused', async () => {
    const port = new URL(fake.apiUrl).port;
    for (const [apiUrl, what] of [
      ['https://169.254.169.254/api/', /refused 169\.254\.169\.254: .*link-local/],
      ['https://10.20.30.40/api/', /refused 10\.20\.30\.40: .*private/],
      // A name is resolved and its addresses checked; loopback needs the development setting.
      [`https://localhost:${port}/api/`, /refused localhost \((127\.0\.0\.1|::1)\): .*loopback/],
    ] as const) {
      h.config = { api_url: apiUrl };
      const callId = randomUUID();
      const observation = await h.call(
        'post_slack_message',
        { channel: '#ops', text: 'x' },
        { callId },
      );
      expect(observation.text).toMatch(what);
      // Nothing was sent, so the delivery failed; it is not unknown, and not retried.
      const [event] = (await h.events()).filter((e) => e.callId === callId);
      expect(event).toMatchObject({ state: 'failed', attempts: 1 });
    }
    expect(fake.received).toEqual([]);
  });

  it('an agent without the token is not offered the tool, with the reason', () => {
    const { withheld } = offerWithSecrets();
    expect(withheld.find((w) => w.name === 'post_slack_message')?.reason).toBe(
      'needs secret slack_token, not captured for this agent',
    );
  });
});
