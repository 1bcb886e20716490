import { describe, expect, it } from 'vitest';
import { catalogDefinitions } from '../../test/support/remote-catalog.ts';
import { integrationsOf, renderIntegrations } from './integration-summary.ts';
import { buildToolIndex } from './tool-index.ts';

const definitions = catalogDefinitions();
const index = buildToolIndex(definitions);
const top = (query: string, n = 5) => index.search(query, n).map((m) => m.name);

describe('the tool index over the fixture catalog', () => {
  it('ranks operations for needs phrased the way models and people phrase them', () => {
    expect(top('open a PR', 1)).toEqual(['github__create_pull_request']);
    expect(top('which files changed in the pull request', 3)).toContain(
      'github__get_pull_request_files',
    );
    expect(top('post a message in the #deploys channel', 3)).toContain('slack__slack_post_message');
    expect(top('how high above sea level is Denver', 3)).toContain('google_maps__maps_elevation');
  });

  it('answers with name, one line, source and score, best first, at most the limit', () => {
    const found = index.search('create an issue on gitlab', 2);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatchObject({
      name: 'gitlab__create_issue',
      description: 'Create a new issue in a GitLab project',
      source: { kind: 'provider', slug: 'gitlab' },
    });
    expect(found[0]?.score).toBeGreaterThan(found[1]?.score ?? Infinity);
    expect(index.search('the of and', 5)).toEqual([]);
  });

  it('summarizes the integrations in one bounded line each: label and purpose', () => {
    const summary = renderIntegrations(integrationsOf(definitions));
    expect(summary).toContain('github: pull request, issue, file');
    expect(summary).toContain('postgres: query');
    // a subject that repeats the label is no purpose
    expect(summary).toMatch(/; sequential_thinking(;|$)/);
    expect(summary.split('; ')).toHaveLength(11);
  });
});
