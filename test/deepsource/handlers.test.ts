import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { effectHarness, offerWithSecrets, type EffectHarness } from '../support/effect-harness.ts';
import {
  startDeepSourceFake,
  type DeepSourceFake,
  type FakeIssue,
} from '../support/deepsource-fake.ts';

const TOKEN = 'dsp_agentOwnToken0123456789abcdef';

describe('mesh.deepsource against the DeepSource fake', () => {
  let fake: DeepSourceFake;
  let h: EffectHarness;

  beforeAll(async () => {
    fake = await startDeepSourceFake();
    fake.tokens.add(TOKEN);
    h = await effectHarness('mesh.deepsource', 'deepsource_api_token');
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    h.config = { api_url: fake.url, allow_loopback_http: true };
    h.secret = TOKEN;
  });

  const fields = () => fake.received.map((r) => r.field);

  it("lists the repository's open issues with counts and first occurrences", async () => {
    const observation = await h.call('list_deepsource_issues', { owner: 'acme', repo: 'api' });
    expect(observation.kind).toBe('result');
    expect(observation.text).toContain(
      'PYL-W0612 [ANTI_PATTERN, MINOR] Unused variable found (python): 5 occurrences — ' +
        'api/views.py:12, api/models.py:40, api/models.py:77 and 2 more',
    );
    expect(observation.text).toContain('BAN-B602 [SECURITY, CRITICAL]');
    expect(observation.text).toContain('JS-0002 [BUG_RISK, MAJOR]');
    expect(fake.received).toHaveLength(1);
    expect(fake.received[0]).toMatchObject({
      operation: 'MeshDeepSourceIssues',
      field: 'repository.issues',
      authorized: true,
      variables: { login: 'acme', name: 'api', provider: 'GITHUB', first: 25, occurrences: 3 },
    });
    // Queries have no effects: nothing went through the outbound machinery.
    expect(await h.events()).toEqual([]);
  });

  it('filters by analyzer at DeepSource and by category, on the configured provider', async () => {
    fake.repos[0] = { ...fake.repos[0]!, provider: 'GITLAB' };
    h.config = { ...h.config, vcs_provider: 'gitlab' };
    const observation = await h.call('list_deepsource_issues', {
      owner: 'acme',
      repo: 'api',
      analyzer: 'Python',
      category: 'SECURITY',
    });
    expect(observation.text).toMatch(
      /^Open DeepSource issues from analyzer python in category SECURITY/,
    );
    expect(observation.text).toContain('BAN-B602');
    expect(observation.text).not.toContain('PYL-W0612');
    expect(fake.received[0]?.variables).toMatchObject({
      provider: 'GITLAB',
      analyzerIn: ['python'],
    });
  });

  it('pages through issues with cursors, and stops at the page cap', async () => {
    const style = (n: number): FakeIssue => ({
      shortcode: `STY-${n}`,
      title: 'Style',
      category: 'STYLE',
      severity: 'MINOR',
      analyzer: 'python',
      occurrences: [{ path: 'a.py', beginLine: n }],
    });
    const repo = fake.repos[0]!;
    repo.issues.splice(0, repo.issues.length, ...Array.from({ length: 120 }, (_, n) => style(n)));
    repo.issues.push({ ...style(999), shortcode: 'SEC-1', category: 'SECURITY' });
    const found = await h.call('list_deepsource_issues', {
      owner: 'acme',
      repo: 'api',
      category: 'SECURITY',
    });
    expect(found.text).toContain('SEC-1 [SECURITY, MINOR]');
    expect(fake.received.map((r) => r.variables['after'] ?? null)).toEqual([
      null,
      expect.any(String),
      expect.any(String),
    ]);

    fake.received.length = 0;
    repo.issues.splice(0, repo.issues.length, ...Array.from({ length: 400 }, (_, n) => style(n)));
    const capped = await h.call('list_deepsource_issues', {
      owner: 'acme',
      repo: 'api',
      category: 'SECURITY',
    });
    expect(capped.kind).toBe('result');
    expect(capped.text).toContain('Searched the first 250 issues');
    expect(fake.received).toHaveLength(5);

    fake.received.length = 0;
    const limited = await h.call('list_deepsource_issues', {
      owner: 'acme',
      repo: 'api',
      limit: 2,
    });
    expect(limited.text).toContain('More issues may match');
    expect(fake.received.map((r) => r.variables['first'])).toEqual([2]);
  });

  it('reads the checks of a pull request: its latest run, per analyzer, with links', async () => {
    const observation = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'api',
      pull_request: 42,
    });
    expect(observation.kind).toBe('result');
    const runUrl = `${new URL(fake.url).origin}/gh/acme/api/run/6a1f2c3d-4b5e-4f60-8a7b-9c0d1e2f3a4b/`;
    expect(observation.text).toContain(
      `DeepSource analysis of pull request #42 in acme/api (commit bbbbbbbbbbbb on fix-login): FAILURE; occurrences 2 introduced, 1 resolved. ${runUrl}`,
    );
    expect(observation.text).toContain(
      `- python (Python): FAILURE; 2 introduced, 1 resolved ${runUrl}python/`,
    );
    expect(observation.text).toContain('- secrets (Secrets): SUCCESS; 0 introduced, 0 resolved');
    expect(fields()).toEqual(['repository.pullRequest', 'repository.analysisRuns']);
    expect(fake.received[0]?.variables).toMatchObject({ number: 42, login: 'acme', name: 'api' });
    expect(fake.received[1]?.variables).toMatchObject({ branch: 'fix-login' });

    const pending = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'api',
      pull_request: 43,
    });
    expect(pending.kind).toBe('result');
    expect(pending.text).toContain('no analysis run yet for pull request #43');

    const missing = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'api',
      pull_request: 7,
    });
    expect(missing.kind).toBe('tool_error');
    expect(missing.text).toContain('DeepSource has no pull request #7 in acme/api');
  });

  it('reads the run of a commit, and says when there is none', async () => {
    const observation = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'api',
      commit: 'A'.repeat(40),
    });
    expect(observation.text).toContain(
      `DeepSource analysis of commit ${'a'.repeat(40)} in acme/api (commit aaaaaaaaaaaa on fix-login): SUCCESS`,
    );
    expect(fake.received[0]).toMatchObject({
      operation: 'MeshDeepSourceCommitRun',
      field: 'run',
      variables: { commitOid: 'a'.repeat(40) },
    });
    const none = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'api',
      commit: 'c'.repeat(40),
    });
    expect(none.kind).toBe('tool_error');
    expect(none.text).toContain(`no analysis run for commit ${'c'.repeat(40)} in acme/api`);
  });

  it('bad arguments are typed errors naming the field, without a request', async () => {
    const neither = await h.call('get_deepsource_pr_checks', { owner: 'acme', repo: 'api' });
    expect(neither.kind).toBe('tool_error');
    expect(neither.text).toContain('exactly one of `pull_request`');
    const both = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'api',
      pull_request: 1,
      commit: 'a'.repeat(40),
    });
    expect(both.text).toContain('exactly one of `pull_request`');
    const badOwner = await h.call('list_deepsource_issues', { owner: 'ac me;drop', repo: 'api' });
    expect(badOwner.kind).toBe('invalid_input');
    expect(badOwner.text).toContain('owner');
    expect(badOwner.text).not.toContain('ac me;drop');
    h.config = { ...h.config, vcs_provider: 'SOURCEFORGE' };
    const badProvider = await h.call('list_deepsource_issues', { owner: 'acme', repo: 'api' });
    expect(badProvider.text).toContain('`vcs_provider` must be one of GITHUB');
    expect(fake.received).toEqual([]);
  });

  it('a refused token names the secret to capture, never its value, and is not retried', async () => {
    h.secret = 'dsp_revoked0123456789abcdef';
    for (const answer of ['signature', 'http401'] as const) {
      fake.received.length = 0;
      fake.badTokenAnswer = answer;
      const observation = await h.call('list_deepsource_issues', { owner: 'acme', repo: 'api' });
      expect(observation.kind).toBe('tool_error');
      expect(observation.text).toContain('capture a valid deepsource_api_token');
      expect(observation.text).not.toContain(h.secret);
      expect(fake.received).toHaveLength(1);
      expect(fake.received[0]?.authorized).toBe(false);
    }
  });

  it('a missing repository and a forbidden one say which', async () => {
    const missing = await h.call('list_deepsource_issues', { owner: 'acme', repo: 'nope' });
    expect(missing.kind).toBe('tool_error');
    expect(missing.text).toContain('DeepSource has no repository acme/nope on GITHUB');
    const forbidden = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'secret-sauce',
      pull_request: 1,
    });
    expect(forbidden.kind).toBe('tool_error');
    expect(forbidden.text).toContain('no access to repository acme/secret-sauce on GITHUB');
    expect(forbidden.text).toContain('deepsource_api_token');
  });

  it('retries a rate limit and a 503, then gives up after three attempts', async () => {
    fake.failures.push('ratelimited', 'unavailable');
    const observation = await h.call('list_deepsource_issues', { owner: 'acme', repo: 'api' });
    expect(observation.kind).toBe('result');
    expect(fake.received).toHaveLength(3);

    fake.received.length = 0;
    fake.failures.push('unavailable', 'unavailable', 'unavailable', 'unavailable');
    const failed = await h.call('get_deepsource_pr_checks', {
      owner: 'acme',
      repo: 'api',
      pull_request: 42,
    });
    expect(failed.kind).toBe('tool_error');
    expect(failed.text).toContain('DeepSource answered HTTP 503');
    expect(failed.text).toContain('3 attempts in all');
    expect(fake.received).toHaveLength(3);
  });

  it('refuses plain http unless allow_loopback_http is on, naming the setting', async () => {
    h.config = { api_url: fake.url };
    const observation = await h.call('list_deepsource_issues', { owner: 'acme', repo: 'api' });
    expect(observation.text).toContain('`api_url` must be an https URL');
    expect(observation.text).toContain('`allow_loopback_http`');
    expect(fake.received).toEqual([]);
  });

  it('an agent without the token is not offered the tools, with the reason', () => {
    const { registry: offered, withheld } = offerWithSecrets();
    expect(offered.names().filter((n) => n.includes('deepsource'))).toEqual([]);
    for (const name of ['list_deepsource_issues', 'get_deepsource_pr_checks'])
      expect(withheld.find((w) => w.name === name)?.reason).toBe(
        'needs secret deepsource_api_token, not captured for this agent',
      );
  });
});
