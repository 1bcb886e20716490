import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { catalog } from '../../src/generated/catalog.ts';
import { loadCatalog } from '../../src/manifest/verify-catalog.ts';
import type { JsonValue } from '../../src/model/json.ts';
import type { ServiceKey } from '../../src/tool/context.ts';
import { WORKSPACES, WorkspaceUnavailableError } from '../../src/tool/workspace.ts';
import { effectHarness, type EffectHarness } from '../support/effect-harness.ts';
import { startGitHubFake, type GitHubFake } from '../support/github-fake.ts';

const TOKEN = 'ghp_agentOwnToken0123456789abcdef';
const { registry } = loadCatalog(catalog);

/**
 * The workspace service as it answers when no backend is granted: the handlers' API half runs
 * for real against the fake, and stops where a workspace would be needed.
 */
const noWorkspace: ReadonlyArray<readonly [ServiceKey<unknown>, unknown]> = [
  [
    WORKSPACES,
    {
      forCall: () =>
        Promise.reject(
          new WorkspaceUnavailableError(
            'no_backend',
            'no execution backend is granted to this agent',
          ),
        ),
    },
  ],
];

describe('mesh.github against the GitHub fake', () => {
  let fake: GitHubFake;
  let config: Record<string, JsonValue>;
  let secret: string | undefined;

  let h: EffectHarness;
  // Each call is a run's step, as in a real run: effects go through the outbound machinery.
  const call = async (name: string, args: Record<string, unknown>) => {
    h.config = config;
    h.secret = secret;
    return h.call(name, args);
  };

  beforeAll(async () => {
    h = await effectHarness('mesh.github', 'github_credential', noWorkspace);
    fake = await startGitHubFake();
    fake.users.set(TOKEN, { login: 'mesh-agent', id: 4242, name: 'Mesh Agent', email: null });
    fake.repos.set('acme/widgets', { defaultBranch: 'trunk' });
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
  });
  beforeEach(() => {
    config = {
      api_base_url: fake.baseUrl,
      git_base_url: 'http://127.0.0.1:9',
      allow_loopback_http: true,
    };
    secret = TOKEN;
    fake.requests.length = 0;
    fake.pulls.length = 0;
  });

  it('declares the tools as the manifest says', () => {
    const checkout = registry.get('checkout_github_repo');
    expect(checkout?.class).toBe('workspace');
    expect(checkout?.replay).toBe('effectful');
    expect(checkout?.needs).toEqual([
      'workspace',
      'service:mesh.workspace',
      'secret:github_credential',
    ]);
    const pr = registry.get('create_github_pull_request');
    expect(pr?.class).toBe('effect');
    expect(pr?.needs).toEqual(['secret:github_credential', 'service:mesh.outbound']);
  });

  describe('checkout_github_repo', () => {
    it('proves the credential and reads the default branch before it asks for a workspace', async () => {
      const observation = await call('checkout_github_repo', { repo: 'acme/widgets' });
      expect(fake.requests.map((r) => `${r.method} ${r.path} ${r.scheme} ${r.status}`)).toEqual([
        'GET /user token 200',
        'GET /repos/acme/widgets token 200',
      ]);
      expect(observation?.kind).toBe('tool_error');
      expect(observation?.text).toBe(
        'There is no workspace to clone acme/widgets into: no execution backend is granted to this agent',
      );
    });

    it('answers a bad credential with the fix, never the token', async () => {
      secret = 'ghp_revokedToken0123456789abcdef';
      const observation = await call('checkout_github_repo', { repo: 'acme/widgets' });
      expect(observation?.kind).toBe('tool_error');
      expect(observation?.text).toContain('401 Bad credentials');
      expect(observation?.text).toContain('capture a valid github_credential for this agent');
      expect(observation?.text).not.toContain(secret);
      expect(fake.requests.map((r) => r.path)).toEqual(['/user']);
    });

    it('names a repository that does not exist or cannot be seen', async () => {
      const observation = await call('checkout_github_repo', { repo: 'acme/missing' });
      expect(observation?.kind).toBe('tool_error');
      expect(observation?.text).toContain('Repository acme/missing was not found on GitHub');
      expect(observation?.text).toContain('mesh-agent');
    });

    it('refuses a repo argument that is not owner/name, before any call', async () => {
      for (const repo of ['acme', 'acme/widgets/x', '-acme/w', 'acme/..', 'a b/c']) {
        const observation = await call('checkout_github_repo', { repo });
        expect(observation?.kind).toBe('invalid_input');
      }
      const branch = await call('checkout_github_repo', { repo: 'a/b', branch: '--upload-pack=x' });
      expect(branch?.kind).toBe('invalid_input');
      expect(fake.requests).toEqual([]);
    });

    it('refuses plain http to this machine unless allow_loopback_http is on, naming the setting', async () => {
      config = { ...config, allow_loopback_http: false };
      const observation = await call('checkout_github_repo', { repo: 'acme/widgets' });
      expect(observation?.kind).toBe('tool_error');
      expect(observation?.text).toContain('`api_base_url` must be an https URL');
      expect(observation?.text).toContain('`allow_loopback_http`');
      expect(fake.requests).toEqual([]);

      config = { ...config, api_base_url: 'https://api.github.com', allow_loopback_http: false };
      const git = await call('checkout_github_repo', { repo: 'acme/widgets' });
      expect(git?.text).toContain('`git_base_url` must be an https URL');
    });

    it('refuses http anywhere but this machine, even with allow_loopback_http', async () => {
      config = { ...config, api_base_url: 'http://api.example.test' };
      const observation = await call('checkout_github_repo', { repo: 'acme/widgets' });
      expect(observation?.kind).toBe('tool_error');
      expect(observation?.text).toContain('`api_base_url` must be an https URL');
      expect(observation?.text).not.toContain('allow_loopback_http');
      config = { ...config, api_base_url: 'https://user:pw@api.example.test' };
      expect((await call('checkout_github_repo', { repo: 'acme/widgets' }))?.text).toContain(
        'may not carry credentials',
      );
      expect(fake.requests).toEqual([]);
    });
  });

  it('says GitHub could not be reached when nothing answers at api_base_url', async () => {
    config = { ...config, api_base_url: 'http://127.0.0.1:9' };
    for (const [name, args] of [
      ['checkout_github_repo', { repo: 'acme/widgets' }],
      ['create_github_pull_request', { repo: 'acme/widgets', head: 'x', title: 'T' }],
    ] as const) {
      const observation = await call(name, args);
      expect(observation?.kind).toBe('tool_error');
      expect(observation?.text).toContain(
        'GitHub at the configured api_base_url (http://127.0.0.1:9) could not be reached',
      );
      expect(observation?.text).not.toContain(TOKEN);
    }
  });

  describe('create_github_pull_request', () => {
    it('opens a pull request into the default branch when no base is given', async () => {
      const observation = await call('create_github_pull_request', {
        repo: 'acme/widgets',
        head: 'topic',
        title: 'Add a change',
        body: 'What and why.',
      });
      expect(observation?.kind).toBe('result');
      expect(observation?.data).toEqual({
        number: 1,
        html_url: 'https://github.com/acme/widgets/pull/1',
        head: 'topic',
        base: 'trunk',
        delivery: 'delivered',
        attempts: 1,
      });
      expect(observation?.text).toContain('#1');
      expect(fake.pulls).toEqual([
        {
          repo: 'acme/widgets',
          number: 1,
          title: 'Add a change',
          head: 'topic',
          base: 'trunk',
          // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest's matcher
          body: expect.stringMatching(/^What and why\.\n\n<!-- mesh-outbound:[0-9a-f]{64} -->$/),
          draft: false,
          by: 'mesh-agent',
        },
      ]);
      // The pull request is an outbound event, with GitHub's number and link.
      const [event] = await h.events();
      expect(event).toMatchObject({
        kind: 'github.pull_request_create',
        target: 'repo acme/widgets',
        state: 'delivered',
        externalId: 'acme/widgets#1',
        link: 'https://github.com/acme/widgets/pull/1',
        reconciles: true,
      });
    });

    it('reconciles a lost answer by its marker: one pull request, reported opened', async () => {
      fake.failures.push({ kind: 'lost' });
      const observation = await call('create_github_pull_request', {
        repo: 'acme/widgets',
        head: 'lost-answer',
        base: 'trunk',
        title: 'Answer lost',
      });
      expect(observation?.kind).toBe('result');
      expect(observation?.text).toContain('Opened pull request #');
      expect(fake.pulls.filter((p) => p.head === 'lost-answer')).toHaveLength(1);
      const asked = fake.requests.filter((r) => r.path === '/repos/acme/widgets/pulls');
      expect(asked.map((r) => `${r.method} ${r.status}`)).toEqual(['POST 502', 'GET 200']);
      expect(asked[1]?.query).toMatchObject({ head: 'acme:lost-answer', base: 'trunk' });
    });

    it("turns GitHub's 422 into an observation with its message", async () => {
      const args = { repo: 'acme/widgets', head: 'topic', base: 'trunk', title: 'Twice' };
      expect((await call('create_github_pull_request', args))?.kind).toBe('result');
      const again = await call('create_github_pull_request', args);
      expect(again?.kind).toBe('tool_error');
      expect(again?.text).toContain(
        '(422): Validation Failed: A pull request already exists for acme:topic.',
      );
      const empty = await call('create_github_pull_request', { ...args, head: 'trunk' });
      expect(empty?.text).toContain('No commits between trunk and trunk');
      expect(fake.pulls).toHaveLength(1);
    });

    it('answers 401 and 404 as observations', async () => {
      const args = { repo: 'acme/widgets', head: 'topic', base: 'trunk', title: 'T' };
      secret = 'ghp_revokedToken0123456789abcdef';
      const bad = await call('create_github_pull_request', args);
      expect(bad?.kind).toBe('tool_error');
      expect(bad?.text).toContain('capture a valid github_credential');
      expect(bad?.text).not.toContain(secret);
      secret = TOKEN;
      const missing = await call('create_github_pull_request', { ...args, repo: 'acme/missing' });
      expect(missing?.kind).toBe('tool_error');
      expect(missing?.text).toContain('Repository acme/missing was not found');
      const noBase = await call('create_github_pull_request', {
        repo: 'acme/missing',
        head: 'x',
        title: 'T',
      });
      expect(noBase?.text).toContain('Repository acme/missing was not found');
    });

    it('bounds the title and body', async () => {
      const args = { repo: 'acme/widgets', head: 'topic' };
      expect((await call('create_github_pull_request', { ...args, title: '' }))?.kind).toBe(
        'invalid_input',
      );
      expect(
        (await call('create_github_pull_request', { ...args, title: 'x'.repeat(257) }))?.kind,
      ).toBe('invalid_input');
      expect(
        (await call('create_github_pull_request', { ...args, title: 't', body: 'x'.repeat(20001) }))
          ?.kind,
      ).toBe('invalid_input');
      expect(fake.requests).toEqual([]);
    });
  });

  describe('app mode', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

    beforeEach(() => {
      fake.app = { id: 777, slug: 'mesh-bot', publicKey, installations: [99], botId: 5555 };
      config = { ...config, auth_mode: 'app', app_id: '777', installation_id: 99 };
      secret = pem;
    });

    it('mints an installation token with an RS256 app JWT and acts with it', async () => {
      const observation = await call('create_github_pull_request', {
        repo: 'acme/widgets',
        head: 'bot-topic',
        title: 'From the app',
      });
      expect(observation?.kind).toBe('result');
      expect(fake.pulls.at(-1)).toMatchObject({
        head: 'bot-topic',
        base: 'trunk',
        by: 'mesh-bot[bot]',
      });
      const minted = fake.requests.find((r) => r.path === '/app/installations/99/access_tokens');
      expect(minted).toMatchObject({ method: 'POST', scheme: 'bearer', status: 201 });
      expect(
        fake.requests
          .filter((r) => r.path.startsWith('/repos/'))
          .every((r) => r.scheme === 'token'),
      ).toBe(true);
    });

    it("reads the app bot's identity for checkout, then asks for the workspace", async () => {
      const observation = await call('checkout_github_repo', { repo: 'acme/widgets' });
      expect(observation?.text).toContain('There is no workspace to clone acme/widgets into');
      const paths = fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`);
      expect(paths).toContain('GET /app 200');
      expect(paths).toContain('GET /users/mesh-bot[bot] 200');
      expect(paths).not.toContain('GET /user 200');
    });

    it('says what to check when the key or the installation is wrong', async () => {
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
      secret = other.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const args = { repo: 'acme/widgets', head: 'x', base: 'trunk', title: 'T' };
      const wrongKey = await call('create_github_pull_request', args);
      expect(wrongKey?.kind).toBe('tool_error');
      expect(wrongKey?.text).toContain(
        'did not mint an installation token for app 777, installation 99',
      );
      expect(wrongKey?.text).not.toContain('PRIVATE KEY-----\n');

      secret = pem;
      config = { ...config, installation_id: 100 };
      const wrongInstallation = await call('create_github_pull_request', args);
      expect(wrongInstallation?.text).toContain('installation 100 (404');

      secret = 'not a pem';
      config = { ...config, installation_id: 99 };
      expect((await call('create_github_pull_request', args))?.text).toContain(
        'the captured private key could not sign an app token',
      );

      config = { ...config, installation_id: null };
      expect((await call('create_github_pull_request', args))?.text).toContain(
        'the setting `installation_id`',
      );
    });
  });
});
