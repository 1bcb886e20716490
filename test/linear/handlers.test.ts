import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { effectHarness, offerWithSecrets, type EffectHarness } from '../support/effect-harness.ts';
import { startLinearFake, type LinearFake } from '../support/linear-fake.ts';

const KEY = 'lin_api_agentOwnKey0123456789abcdef';

describe('mesh.linear against the Linear fake', () => {
  let fake: LinearFake;
  let h: EffectHarness;

  beforeAll(async () => {
    fake = await startLinearFake();
    fake.keys.add(KEY);
    h = await effectHarness('mesh.linear', 'linear_api_key');
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    h.config = { api_url: fake.url, allow_loopback_http: true, default_team: 'ENG' };
    h.secret = KEY;
  });

  const creates = () => fake.received.filter((r) => r.field === 'issueCreate');

  it('opens an issue once, with our key as its id, and records the delivery', async () => {
    const callId = randomUUID();
    const observation = await h.call(
      'create_linear_issue',
      { title: 'Deploy failing on main', description: 'The deploy job exits 1.' },
      { callId, step: 7 },
    );
    expect(observation.kind).toBe('result');
    expect(observation.text).toMatch(/^Opened Linear issue ENG-1 in team ENG: http/);
    expect(fake.issues.size).toBe(1);
    const [issue] = [...fake.issues.values()];
    expect(issue).toMatchObject({ title: 'Deploy failing on main', teamId: fake.teams[0]?.id });
    expect(creates()).toHaveLength(1);
    expect(creates()[0]?.authorized).toBe(true);

    const [event] = (await h.events()).filter((e) => e.callId === callId);
    expect(event).toMatchObject({
      kind: 'linear.issue_create',
      target: 'team ENG',
      state: 'delivered',
      attempts: 1,
      externalId: issue?.id,
      link: issue?.url,
      reconciles: true,
    });
    // The client-supplied id is our key's UUID form.
    expect((creates()[0]?.variables['input'] as { id: string }).id).toBe(issue?.id);

    // The same call settled again (a resumed run) finds the delivery and sends nothing.
    const again = await h.call(
      'create_linear_issue',
      { title: 'Deploy failing on main', description: 'The deploy job exits 1.' },
      { callId, step: 7 },
    );
    expect(again.text).toContain('not sent again');
    expect(creates()).toHaveLength(1);
  });

  it('retries a rate limit and a 500, reconciling by id before resending', async () => {
    fake.failures.push('ratelimited', 'internal');
    const observation = await h.call('create_linear_issue', { title: 'Flaky' });
    expect(observation.kind).toBe('result');
    expect(fake.issues.size).toBe(1);
    expect(creates()).toHaveLength(3);
    // After the 500 the package asked Linear for the issue by our id before sending again.
    const fields = fake.received.map((r) => r.field);
    expect(fields).toEqual(['teams', 'issueCreate', 'issueCreate', 'issue', 'issueCreate']);
  });

  it('an answer lost after Linear acted is reconciled: one issue, never two', async () => {
    fake.failures.push('lost');
    const observation = await h.call('create_linear_issue', { title: 'Once only' });
    expect(observation.kind).toBe('result');
    expect(fake.issues.size).toBe(1);
    expect(creates()).toHaveLength(1);
    expect([...fake.createRequests.values()]).toEqual([1]);
  });

  it('a wrong key is an observation naming the fix, without the key; nothing is retried', async () => {
    h.secret = 'lin_api_revoked0123456789abcdef';
    const observation = await h.call('create_linear_issue', { title: 'x' });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toContain('capture a valid linear_api_key');
    expect(observation.text).not.toContain(h.secret);
    expect(fake.issues.size).toBe(0);
    // The team lookup (a read) met the refusal first; no mutation was attempted.
    expect(fake.received.map((r) => r.field)).toEqual(['teams']);
  });

  it('a terminal refusal of the mutation is a failed delivery with Linear’s reason', async () => {
    const observation = await h.call('create_linear_issue', { title: 'x', team: 'NOPE' });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toContain('no team with key NOPE');
    expect(creates()).toHaveLength(0);
  });

  it('comments and moves an issue between states, each delivered once', async () => {
    await h.call('create_linear_issue', { title: 'Work' });
    const comment = await h.call('comment_on_linear_issue', {
      issue: 'ENG-1',
      body: 'Looking into it.',
    });
    expect(comment.kind).toBe('result');
    expect(fake.comments.size).toBe(1);
    expect([...fake.comments.values()][0]?.body).toBe('Looking into it.');

    const moved = await h.call('update_linear_issue_state', {
      issue: 'ENG-1',
      state: 'in progress',
    });
    expect(moved.text).toMatch(/^Moved ENG-1 to In Progress/);
    const issue = [...fake.issues.values()][0];
    expect(fake.teams[0]?.states.find((s) => s.id === issue?.stateId)?.name).toBe('In Progress');

    const unknownState = await h.call('update_linear_issue_state', {
      issue: 'ENG-1',
      state: 'Shipped',
    });
    expect(unknownState.kind).toBe('tool_error');
    expect(unknownState.text).toContain('Its states: Backlog, Todo, In Progress, Done');

    expect((await h.events()).map((e) => [e.kind, e.state])).toEqual(
      expect.arrayContaining([
        ['linear.comment_create', 'delivered'],
        ['linear.issue_update_state', 'delivered'],
      ]),
    );
  });

  it('searches and reads issues (queries: no outbound event)', async () => {
    await h.call('create_linear_issue', { title: 'Deploy failing', description: 'exit 1' });
    const before = (await h.events()).length;
    const found = await h.call('search_linear_issues', { query: 'deploy' });
    expect(found.text).toContain('ENG-1 Deploy failing [Backlog]');
    const read = await h.call('get_linear_issue', { issue: 'ENG-1' });
    expect(read.text).toContain('Team ENG; assignee nobody.');
    expect(read.text).toContain('exit 1');
    expect((await h.events()).length).toBe(before);
  });

  it('refuses plain http unless allow_loopback_http is on, naming the setting', async () => {
    h.config = { api_url: fake.url };
    const observation = await h.call('search_linear_issues', { query: 'x' });
    expect(observation.text).toContain('`api_url` must be an https URL');
    expect(observation.text).toContain('`allow_loopback_http`');
    expect(fake.received).toEqual([]);
  });

  it('reaches Linear only through the guarded fetch: metadata, private and loopback are refused', async () => {
    const port = new URL(fake.url).port;
    for (const [apiUrl, what] of [
      ['https://169.254.169.254/graphql', /refused 169\.254\.169\.254: .*link-local/],
      ['https://10.20.30.40/graphql', /refused 10\.20\.30\.40: .*private/],
      // A name is resolved and its addresses checked; loopback needs the development setting.
      [`https://localhost:${port}/graphql`, /refused localhost \((127\.0\.0\.1|::1)\): .*loopback/],
    ] as const) {
      h.config = { api_url: apiUrl, default_team: 'ENG' };
      const read = await h.call('search_linear_issues', { query: 'x' });
      expect(read.text).toMatch(what);
      // A refused mutation was never sent: a failed delivery, not an unknown one.
      const callId = randomUUID();
      const write = await h.call('create_linear_issue', { title: 'Never sent' }, { callId });
      expect(write.text).toMatch(what);
      const [event] = (await h.events()).filter((e) => e.callId === callId);
      expect(event?.state ?? 'not recorded').not.toBe('unknown');
    }
    expect(fake.received).toEqual([]);
  });

  it('an agent without the key is not offered the tools, with the reason', () => {
    const { registry: offered, withheld } = offerWithSecrets();
    expect(offered.names().filter((n) => n.includes('linear'))).toEqual([]);
    expect(withheld.find((w) => w.name === 'create_linear_issue')?.reason).toBe(
      'needs secret linear_api_key, not captured for this agent',
    );
  });
});
