import { describe, expect, it } from 'vitest';
import { MAX_MATCH_CHARS, unsafePatternReason } from './safe-pattern.ts';

describe('unsafePatternReason', () => {
  it('accepts the patterns the demos and tests use', () => {
    for (const p of [
      'remember (.+)',
      'remember that (.+)',
      'remember (?:that )?(.+)',
      'what do you (?:remember|know) about (.+?)\\??$',
      'use (\\w+) (\\S+)$',
      '^hello$',
      '[a-z]{2,5}-\\d+',
      '(?<verb>list|show) ([^ ]+) now',
      '\\bdone\\b',
    ])
      expect(unsafePatternReason(p, 'i'), p).toBeUndefined();
  });

  it('refuses catastrophic and polynomial backtracking, backreferences and lookaround', () => {
    const cases: [string, RegExp][] = [
      ['(a+)+$', /quantifies a group/],
      ['(a|a)*b', /repeats an alternation/],
      ['(?:\\w+\\s?)*$', /quantifies a group/],
      ['(.*)*', /quantifies a group/],
      ['.*.*x', /two repeats/],
      ['(.+)(.+)x', /two repeats/],
      ['\\w+\\s?\\w+x', /two repeats/],
      ['a+a+a+x', /two repeats/],
      ['x(?:a+|b)y', /repeats inside an alternation/],
      ['(a)\\1', /backreference/],
      ['(?<n>a)\\k<n>', /backreference/],
      ['a(?=b)', /lookaround/],
      ['(?<!a)b', /lookaround/],
      ['(?:)+', /nothing/],
      ['a'.repeat(300), /longer than/],
    ];
    for (const [p, reason] of cases) expect(unsafePatternReason(p, ''), p).toMatch(reason);
    expect(unsafePatternReason('a', 'g')).toMatch(/flag/);
    expect(unsafePatternReason('a', 'v')).toMatch(/flag/);
  });

  it('every accepted pattern of a sample matches capped input quickly', () => {
    const input = 'a'.repeat(MAX_MATCH_CHARS);
    for (const p of ['(.+)x', 'use (\\w+) (\\S+)$', '[ab]+c', 'a{1,50}b']) {
      expect(unsafePatternReason(p, '')).toBeUndefined();
      expect(new RegExp(p).exec(input)).toBeNull();
    }
  });
});
