import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  documentTerms,
  queryTerms,
  words,
  EQUIVALENT_WEIGHT,
  SYNONYM_WEIGHT,
} from './search-terms.ts';

describe('search terms', () => {
  it('splits snake_case, kebab-case, camelCase and acronyms, but not a plural acronym', () => {
    expect(words('get_pull_request_files')).toEqual(['get', 'pull', 'request', 'files']);
    expect(words('get-tiny-image')).toEqual(['get', 'tiny', 'image']);
    expect(words('listDirectoryWithSizes')).toEqual(['list', 'directory', 'with', 'sizes']);
    expect(words('HTMLParser github__create_issue')).toEqual([
      'html',
      'parser',
      'github',
      'create',
      'issue',
    ]);
    expect(words('open PRs')).toEqual(['open', 'prs']);
  });

  it('spells out abbreviations and stems, so a name and a sentence meet', () => {
    expect(documentTerms('create_pull_request')).toEqual(['creat', 'pull', 'request']);
    expect(documentTerms('the PR for my repo')).toEqual(['pull', 'request', 'repositori']);
    expect(documentTerms('files changed')).toEqual(documentTerms('file changes'));
  });

  it('widens a query: its own words at 1, equivalents and synonyms lower, phrases first', () => {
    const bug = queryTerms('file a bug');
    // "file a bug" is about creating an issue, not about files.
    expect(bug.get('creat')).toBe(1);
    expect(bug.has('file')).toBe(false);
    expect(bug.get('issu')).toBe(EQUIVALENT_WEIGHT);
    const page = queryTerms('page the on-call');
    expect(page.get('page')).toBe(1);
    expect(page.get('notifi')).toBe(SYNONYM_WEIGHT);
    expect(queryTerms('the of and')).toEqual(new Map());
  });

  it('reads any text without throwing, into lower-case terms', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const terms = [...documentTerms(text), ...queryTerms(text).keys()];
        for (const t of terms) expect(t).toBe(t.toLowerCase());
      }),
    );
  });
});
