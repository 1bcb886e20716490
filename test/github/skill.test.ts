import { describe, expect, it } from 'vitest';
import { catalog } from '../../src/generated/catalog.ts';
import { renderSkills } from '../../src/manifest/render-skills.ts';
import { loadCatalog } from '../../src/manifest/verify-catalog.ts';

const { packages } = loadCatalog(catalog);
const github = packages.filter((p) => p.manifest.package.id === 'mesh.github');

describe("mesh.github's skill", () => {
  it('teaches the whole flow when both tools are offered', () => {
    const text = renderSkills(github, [
      'checkout_github_repo',
      'create_github_pull_request',
      'workspace_exec',
    ]);
    expect(text).toContain('<mesh-skill package="mesh.github" name="github"');
    expect(text).toContain('`checkout_github_repo`');
    expect(text).toContain('<that path> pr create');
    expect(text).toContain('never force-push it');
    expect(text).toContain('`create_github_pull_request`');
  });

  it('drops the checkout procedure when checkout_github_repo is not offered (no workspace)', () => {
    const text = renderSkills(github, ['create_github_pull_request']);
    expect(text).not.toContain('checkout_github_repo');
    expect(text).not.toContain('workspace_exec');
    expect(text).toContain('`create_github_pull_request`');
  });

  it('drops the fallback when create_github_pull_request is not offered', () => {
    const text = renderSkills(github, ['checkout_github_repo']);
    expect(text).not.toContain('create_github_pull_request');
    expect(text).toContain('<that path> pr create');
  });

  it('is not rendered when neither tool is offered', () => {
    expect(renderSkills(github, ['workspace_exec'])).toBe('');
  });

  it("drops the steps that use another package's tool when that tool is not offered", () => {
    const both = packages.filter((p) =>
      ['mesh.github', 'mesh.workspace'].includes(p.manifest.package.id),
    );
    const all = [
      'checkout_github_repo',
      'create_github_pull_request',
      'workspace_exec',
      'workspace_read_file',
      'workspace_write_file',
    ];
    const full = renderSkills(both, all);
    expect(full).toContain('edit them with `workspace_write_file`');
    const noWrite = renderSkills(
      both,
      all.filter((n) => n !== 'workspace_write_file'),
    );
    const githubBlock = noWrite
      .split('</mesh-skill>')
      .find((b) => b.includes('package="mesh.github"'));
    expect(githubBlock).not.toContain('workspace_write_file');
    expect(githubBlock).toContain('`workspace_exec`');
  });
});
