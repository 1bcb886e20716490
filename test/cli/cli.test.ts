import { afterAll, describe, expect, it } from 'vitest';
import { freshMeshHome, meshIn, removeMeshHome } from '../support/cli.ts';

const home = freshMeshHome('mesh-cli-');
const mesh = meshIn(home);

describe('the mesh command on a fresh embedded database', () => {
  afterAll(() => removeMeshHome(home));

  it('lists the four memory verbs with their classes', async () => {
    const { code, stdout } = await mesh('tools', 'list');
    expect(code).toBe(0);
    for (const verb of ['remember', 'recall', 'amend', 'forget'])
      expect(stdout).toMatch(new RegExp(`^${verb}\\s+query\\s`, 'm'));
    const json = JSON.parse((await mesh('tools', 'list', '--json')).stdout) as {
      name: string;
      package: string;
    }[];
    expect(
      json
        .filter((t) => t.package === 'mesh.memory')
        .map((t) => t.name)
        .sort(),
    ).toEqual(['amend', 'forget', 'recall', 'remember']);
  });

  it('creates an agent and calls a tool through the executor and ledger', async () => {
    expect((await mesh('agents', 'create', 'demo')).code).toBe(0);
    const ok = await mesh(
      'tools',
      'call',
      'remember',
      '--agent',
      'demo',
      '--args',
      '{"content":"x"}',
      '--json',
    );
    expect(ok.code).toBe(0);
    const result = JSON.parse(ok.stdout) as {
      status: string;
      observation: { kind: string; text: string };
    };
    expect(result.status).toBe('succeeded');
    expect(result.observation.text).toMatch(/^Remembered as memory /);

    const refused = await mesh(
      'tools',
      'call',
      'remember',
      '--agent',
      'demo',
      '--args',
      '{"content":"x","source":"y-canary"}',
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('unknown field `source`; the accepted fields are: content');
    expect(refused.stdout + refused.stderr).not.toContain('y-canary');
  }, 60_000);

  it('opts an agent out of a tool and refuses config and secrets the manifest does not declare', async () => {
    expect((await mesh('tools', 'disable', 'forget', '--agent', 'demo')).stdout).toContain(
      'forget is disabled for demo',
    );
    const config = await mesh(
      'config',
      'set',
      '--agent',
      'demo',
      '--package',
      'mesh.memory',
      'colour',
      'canary-blue',
    );
    expect(config.code).toBe(1);
    expect(config.stderr).toContain('no config key "colour"');
    expect(config.stderr).not.toContain('canary-blue');
    const secrets = await mesh('secrets', 'list', '--agent', 'demo');
    expect(secrets.stdout).toContain('No secrets captured for demo');
  }, 60_000);

  it('prints usage errors with exit code 2', async () => {
    const { code, stderr } = await mesh('tools', 'call', 'remember');
    expect(code).toBe(2);
    expect(stderr).toContain('--agent is required');
    // An option the command does not take is a usage error too, not a stack trace.
    const unknown = await mesh('agents', 'create', '--name', 'x');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--name'");
    expect(unknown.stderr).not.toMatch(/\bat .*\.(js|ts):\d+/);
  });
});
