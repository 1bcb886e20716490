import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { effectHarness, offerWithSecrets, type EffectHarness } from '../support/effect-harness.ts';
import {
  headSha,
  startGitHubFake,
  type FakeFile,
  type GitHubFake,
} from '../support/github-fake.ts';

const TOKEN = 'ghp_agentOwnToken0123456789abcdef';
const REPO = 'acme/widgets';
const SHA = headSha(REPO, 'feature');

/** The agent's issues, comments, PR reviews, and reads of pull requests, against the fake. */
describe('mesh.github issues, comments, reviews and pull request reads', () => {
  let fake: GitHubFake;
  let h: EffectHarness;

  beforeAll(async () => {
    fake = await startGitHubFake();
    fake.users.set(TOKEN, { login: 'mesh-agent', id: 4242, name: 'Mesh Agent', email: null });
    fake.users.set('ghp_otherDeveloper0123456789', {
      login: 'octo-dev',
      id: 7,
      name: null,
      email: null,
    });
    fake.repos.set(REPO, { defaultBranch: 'main' });
    h = await effectHarness('mesh.github', 'github_credential');
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    delete fake.app;
    const files: FakeFile[] = Array.from({ length: 150 }, (_, i) => ({
      filename: `src/f${i}.ts`,
      status: i === 0 ? 'renamed' : 'modified',
      additions: 2,
      deletions: 1,
      ...(i === 0 ? { previous_filename: 'src/old.ts' } : {}),
    }));
    // #1 is someone else's pull request; #2 is one the agent opened itself.
    fake.pulls.push(
      {
        repo: REPO,
        number: 1,
        title: 'Add widgets',
        head: 'feature',
        base: 'main',
        body: 'Adds them.',
        draft: false,
        by: 'octo-dev',
        mergeable: null,
        files,
      },
      {
        repo: REPO,
        number: 2,
        title: 'Mine',
        head: 'mine',
        base: 'main',
        body: null,
        draft: true,
        by: 'mesh-agent',
      },
    );
    fake.checkRuns.set(SHA, [
      { name: 'test', status: 'completed', conclusion: 'failure' },
      { name: 'lint', status: 'in_progress', conclusion: null },
    ]);
    h.config = { api_base_url: fake.baseUrl, allow_loopback_http: true };
    h.secret = TOKEN;
  });

  const posts = () => fake.requests.filter((r) => r.method === 'POST');
  const lines = () =>
    fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`.replace(`/repos/${REPO}`, ''));
  /** The run's outbound events are shared by the tests: each reads its own call's. */
  const eventOf = async (callId: string) => (await h.events()).find((e) => e.callId === callId);
  const markerOf = async (callId: string) =>
    `<!-- mesh-outbound:${(await eventOf(callId))?.idempotencyKey ?? 'none'} -->`;

  it('reads an issue, a pull request, its files (paged, capped) and its checks', async () => {
    const before = (await h.events()).length;
    fake.issues.push({
      repo: REPO,
      number: 3,
      id: 99,
      title: 'Widgets break',
      body: 'x'.repeat(2500),
      state: 'open',
      labels: ['bug', 'ui'],
      by: 'octo-dev',
      createdAt: '2026-01-01T00:00:00Z',
    });
    const issue = await h.call('get_github_issue', { repo: REPO, number: 3 });
    expect(issue.text).toContain('acme/widgets#3 [open] Widgets break');
    expect(issue.text).toContain('labels: bug, ui');
    expect(issue.text).toContain('(500 more characters)');
    expect(issue.data).toMatchObject({
      labels: ['bug', 'ui'],
      html_url: 'https://github.com/acme/widgets/issues/3',
      is_pull_request: false,
    });

    const pull = await h.call('get_github_pull_request', { repo: REPO, number: 1 });
    expect(pull.text).toContain('[open] Add widgets');
    expect(pull.text).toContain(
      `acme:feature (${SHA.slice(0, 7)}) into main; mergeable: not computed yet`,
    );
    expect(pull.data).toMatchObject({ draft: false, head: { sha: SHA }, base: { ref: 'main' } });

    const files = await h.call('list_github_pull_request_files', { repo: REPO, number: 1 });
    expect(files.text).toContain('the first 100; there are more');
    expect(files.text).toContain('renamed src/old.ts → src/f0.ts +2 −1');
    const all = await h.call('list_github_pull_request_files', {
      repo: REPO,
      number: 1,
      limit: 300,
    });
    expect(all.data).toMatchObject({ truncated: false });
    expect((all.data as { files: unknown[] }).files).toHaveLength(150);

    const checks = await h.call('list_github_pull_request_checks', { repo: REPO, number: 1 });
    expect(checks.text).toContain('2 check run(s) on the head commit');
    expect(checks.text).toContain('1 failure, 1 in_progress');
    expect(checks.text).toContain('test: completed, failure https://github.com/acme/widgets/runs/');

    expect(lines()).toEqual([
      'GET /issues/3 200',
      'GET /pulls/1 200',
      'GET /pulls/1/files 200',
      'GET /pulls/1/files 200',
      'GET /pulls/1/files 200',
      'GET /pulls/1 200',
      `GET /commits/${SHA}/check-runs 200`,
    ]);
    expect(fake.requests.map((r) => r.query['page'] ?? '')).toEqual([
      '',
      '',
      '1',
      '1',
      '2',
      '',
      '',
    ]);
    expect(fake.requests.every((r) => r.scheme === 'token')).toBe(true);
    expect((await h.events()).length).toBe(before);
  });

  it('a read met by a short rate limit or a 502 is read again; a missing number says so', async () => {
    fake.failures.push({ kind: 'rate_limited', method: 'GET', retryAfter: 0 });
    expect((await h.call('get_github_pull_request', { repo: REPO, number: 1 })).kind).toBe(
      'result',
    );
    fake.failures.push({ kind: 'unavailable', method: 'GET' });
    expect((await h.call('get_github_issue', { repo: REPO, number: 1 })).kind).toBe('result');
    expect(lines()).toEqual([
      'GET /pulls/1 403',
      'GET /pulls/1 200',
      'GET /issues/1 502',
      'GET /issues/1 200',
    ]);
    const missing = await h.call('get_github_issue', { repo: REPO, number: 404 });
    expect(missing.kind).toBe('tool_error');
    expect(missing.text).toContain('Issue #404 in acme/widgets was not found on GitHub');
  });

  it('opens an issue once, its body carrying our key as a hidden marker', async () => {
    const callId = randomUUID();
    const args = { repo: REPO, title: 'Widgets break', body: 'Steps…', labels: ['bug'] };
    const observation = await h.call('create_github_issue', args, { callId, step: 3 });
    expect(observation.kind).toBe('result');
    expect(observation.text).toBe(
      'Opened issue #3 in acme/widgets: https://github.com/acme/widgets/issues/3',
    );
    expect(fake.issues).toHaveLength(1);
    expect(fake.issues[0]).toMatchObject({
      title: 'Widgets break',
      labels: ['bug'],
      by: 'mesh-agent',
    });
    expect(fake.issues[0]?.body).toBe(`Steps…\n\n${await markerOf(callId)}`);
    expect(posts().map((r) => r.body)).toEqual([
      { title: 'Widgets break', body: fake.issues[0]?.body, labels: ['bug'] },
    ]);
    expect(await eventOf(callId)).toMatchObject({
      kind: 'github.issue_create',
      target: 'repo acme/widgets',
      state: 'delivered',
      attempts: 1,
      externalId: String(fake.issues[0]?.id),
      link: 'https://github.com/acme/widgets/issues/3',
      reconciles: true,
    });
    const again = await h.call('create_github_issue', args, { callId, step: 3 });
    expect(again.text).toContain('not sent again');
    expect(fake.issues).toHaveLength(1);
  });

  it('an issue whose answer was lost (502 after creating it) is found by its marker: one issue', async () => {
    fake.issues.push({
      repo: REPO,
      number: 3,
      id: 5,
      title: 'Older, also the agent’s',
      body: 'no marker',
      state: 'closed',
      labels: [],
      by: 'mesh-agent',
      createdAt: '2026-01-01T00:00:00Z',
    });
    fake.failures.push({ kind: 'lost' });
    const callId = randomUUID();
    const observation = await h.call(
      'create_github_issue',
      { repo: REPO, title: 'Once' },
      { callId },
    );
    expect(observation.kind).toBe('result');
    expect(observation.text).toContain('Opened issue #4 in acme/widgets');
    expect(fake.issues.filter((i) => i.title === 'Once')).toHaveLength(1);
    expect(posts()).toHaveLength(1);
    expect(lines()).toEqual(['POST /issues 502', 'GET /user 200', 'GET /issues 200']);
    expect(fake.requests[2]?.query).toEqual({
      creator: 'mesh-agent',
      state: 'all',
      sort: 'created',
      direction: 'desc',
      per_page: '100',
    });
    expect(await eventOf(callId)).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('in app mode the lost issue is found among the repository’s newest issues, as the bot', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fake.app = { id: 777, slug: 'mesh-bot', publicKey, installations: [99], botId: 5555 };
    h.config = { ...h.config, auth_mode: 'app', app_id: '777', installation_id: 99 };
    h.secret = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    fake.failures.push({ kind: 'lost' });
    const observation = await h.call('create_github_issue', { repo: REPO, title: 'From the bot' });
    expect(observation.kind).toBe('result');
    expect(fake.issues).toHaveLength(1);
    expect(fake.issues[0]?.by).toBe('mesh-bot[bot]');
    expect(lines()).toEqual([
      'POST /app/installations/99/access_tokens 201',
      'POST /issues 502',
      'GET /issues 200',
    ]);
    expect(fake.requests[2]?.query['creator']).toBeUndefined();
    expect(fake.requests.slice(1).every((r) => r.scheme === 'token')).toBe(true);
  });

  it('a comment whose connection dropped after it was made is found in the newest pages', async () => {
    fake.issues.push({
      repo: REPO,
      number: 3,
      id: 5,
      title: 'Busy',
      body: null,
      state: 'open',
      labels: [],
      by: 'octo-dev',
      createdAt: '2026-01-01T00:00:00Z',
    });
    for (let i = 0; i < 250; i++)
      fake.comments.push({
        repo: REPO,
        number: 3,
        id: 10 + i,
        body: `comment ${i}`,
        by: 'octo-dev',
        createdAt: '2026-01-01T00:00:00Z',
      });
    fake.failures.push({ kind: 'dropped' });
    const callId = randomUUID();
    const observation = await h.call(
      'comment_on_github_issue',
      { repo: REPO, number: 3, body: 'Looking into it.' },
      { callId },
    );
    expect(observation.kind).toBe('result');
    const mine = fake.comments.filter((c) => c.by === 'mesh-agent');
    expect(mine).toHaveLength(1);
    expect(mine[0]?.body).toBe(`Looking into it.\n\n${await markerOf(callId)}`);
    expect(observation.text).toBe(
      `Commented on acme/widgets#3: https://github.com/acme/widgets/issues/3#issuecomment-${mine[0]?.id}`,
    );
    expect(lines()).toEqual([
      'POST /issues/3/comments 0',
      'GET /issues/3/comments 200',
      'GET /issues/3/comments 200',
      'GET /issues/3/comments 200',
    ]);
    expect(fake.requests.slice(1).map((r) => r.query['page'])).toEqual(['1', '2', '3']);
  });

  it('a review whose answer was lost is found among the reviews: one review', async () => {
    fake.failures.push({ kind: 'lost' });
    const observation = await h.call('create_github_pull_request_review', {
      repo: REPO,
      number: 1,
      event: 'REQUEST_CHANGES',
      body: 'The test check fails.',
    });
    expect(observation.kind).toBe('result');
    expect(observation.text).toMatch(
      /^Submitted a REQUEST_CHANGES review of acme\/widgets#1: https:\/\/github.com\/acme\/widgets\/pull\/1#pullrequestreview-\d+$/,
    );
    expect(fake.reviews).toHaveLength(1);
    expect(fake.reviews[0]).toMatchObject({ state: 'CHANGES_REQUESTED', commitId: SHA });
    expect(lines()).toEqual(['POST /pulls/1/reviews 502', 'GET /pulls/1/reviews 200']);
    expect(posts()[0]?.body).toMatchObject({ event: 'REQUEST_CHANGES' });
  });

  it('approves with no body; refuses what GitHub refuses, and a body-less change request', async () => {
    const approved = await h.call('create_github_pull_request_review', {
      repo: REPO,
      number: 1,
      event: 'APPROVE',
    });
    expect(approved.kind).toBe('result');
    expect(fake.reviews[0]?.body).toMatch(/^<!-- mesh-outbound:[0-9a-f]{64} -->$/);

    const own = await h.call('create_github_pull_request_review', {
      repo: REPO,
      number: 2,
      event: 'APPROVE',
    });
    expect(own.kind).toBe('tool_error');
    expect(own.text).toContain('422: Validation Failed: Can not approve your own pull request');

    const noBody = await h.call('create_github_pull_request_review', {
      repo: REPO,
      number: 1,
      event: 'REQUEST_CHANGES',
    });
    expect(noBody.kind).toBe('invalid_input');
    expect(noBody.text).toContain('`body`');
    expect(posts()).toHaveLength(2);
  });

  it('retries a 429 and a 403 rate limit, honouring the wait, and re-sends a 502 only after looking', async () => {
    fake.failures.push(
      { kind: 'too_many_requests', retryAfter: 2 },
      { kind: 'rate_limited', retryAfter: 0 },
      { kind: 'unavailable' },
    );
    h.delays.length = 0;
    const callId = randomUUID();
    const observation = await h.call(
      'create_github_issue',
      { repo: REPO, title: 'Flaky' },
      { callId },
    );
    expect(observation.kind).toBe('result');
    expect(fake.issues).toHaveLength(1);
    expect(lines()).toEqual([
      'POST /issues 429',
      'POST /issues 403',
      'POST /issues 502',
      'GET /user 200',
      'GET /issues 200',
      'POST /issues 201',
    ]);
    expect(h.delays[0]).toBe(2000);
    expect(await eventOf(callId)).toMatchObject({ state: 'delivered', attempts: 4 });
  });

  it('a long rate limit fails the call with the wait, sending nothing more', async () => {
    fake.failures.push({ kind: 'secondary_rate_limited', retryAfter: 60 });
    const observation = await h.call('comment_on_github_issue', {
      repo: REPO,
      number: 1,
      body: 'x',
    });
    expect(observation.kind).toBe('tool_error');
    expect(observation.text).toContain('asks to wait 60 s');
    expect(lines()).toEqual(['POST /issues/1/comments 403']);
    expect(fake.comments).toEqual([]);
  });

  it('a wrong credential is an observation naming the secret, never its value', async () => {
    h.secret = 'ghp_revokedToken0123456789abcdef';
    for (const [name, args] of [
      ['create_github_issue', { repo: REPO, title: 'x' }],
      ['get_github_pull_request', { repo: REPO, number: 1 }],
    ] as const) {
      const observation = await h.call(name, args);
      expect(observation.kind).toBe('tool_error');
      expect(observation.text).toContain('capture a valid github_credential');
      expect(observation.text).not.toContain(h.secret);
    }
    expect(lines()).toEqual(['POST /issues 401', 'GET /pulls/1 401']);
    expect(fake.issues).toEqual([]);
  });

  it('a missing repository fails the effect with the reason; bad arguments name the field', async () => {
    const missing = await h.call('create_github_issue', { repo: 'acme/nope', title: 'x' });
    expect(missing.kind).toBe('tool_error');
    expect(missing.text).toContain('404 Not Found');
    fake.requests.length = 0;
    for (const [name, args, field] of [
      ['get_github_issue', { repo: REPO, number: 0 }, 'number'],
      ['comment_on_github_issue', { repo: 'not a repo', number: 1, body: 'x' }, 'repo'],
      ['create_github_pull_request_review', { repo: REPO, number: 1, event: 'MERGE' }, 'event'],
      ['list_github_pull_request_files', { repo: REPO, number: 1, limit: 301 }, 'limit'],
    ] as const) {
      const observation = await h.call(name, args);
      expect(observation.kind).toBe('invalid_input');
      expect(observation.text).toContain(field);
      expect(observation.text).not.toContain('not a repo');
      expect(observation.text).not.toContain('MERGE');
    }
    expect(fake.requests).toEqual([]);
  });

  it('an agent without the credential is not offered the tools, with the reason', () => {
    const { registry: offered, withheld } = offerWithSecrets();
    expect(offered.names().filter((n) => n.includes('github'))).toEqual([]);
    for (const name of ['create_github_issue', 'get_github_pull_request'])
      expect(withheld.find((w) => w.name === name)?.reason).toBe(
        'needs secret github_credential, not captured for this agent',
      );
  });
});
