import { describe, expect, it } from 'vitest';
import { LoadedSet } from './loaded-set.ts';

const tool = (name: string, tokens = 100) => ({ name, tokens });

describe('the loaded set', () => {
  it('unloads the least recently used first when a load passes the share', () => {
    const set = new LoadedSet(300);
    set.load([tool('a')]);
    set.load([tool('b')]);
    set.load([tool('c')]);
    const change = set.load([tool('d'), tool('e')]);
    expect(change.loaded).toEqual(['d', 'e']);
    expect(change.unloaded).toEqual(['a', 'b']);
    expect(set.names()).toEqual(['c', 'e', 'd']);
    expect(set.tokens).toBe(300);
  });

  it('keeps a tool in use: touching it makes it the last to go', () => {
    const set = new LoadedSet(300);
    set.load([tool('a')]);
    set.load([tool('b')]);
    set.load([tool('c')]);
    expect(set.touch('a')).toBe(true);
    expect(set.touch('not-loaded')).toBe(false);
    expect(set.load([tool('d')]).unloaded).toEqual(['b']);
    expect(set.names()).toEqual(['c', 'a', 'd']);
  });

  it('refreshes a tool found again instead of loading it twice', () => {
    const set = new LoadedSet(300);
    set.load([tool('a'), tool('b')]);
    const change = set.load([tool('b'), tool('c')]);
    expect(change).toEqual({ loaded: ['c'], refreshed: ['b'], unloaded: [], skipped: [] });
    expect(set.names()).toEqual(['a', 'c', 'b']);
  });

  it('keeps the better matches of one search when they do not all fit, and says what it skipped', () => {
    const set = new LoadedSet(250);
    const change = set.load([tool('best'), tool('second'), tool('third')]);
    expect(change.loaded).toEqual(['best', 'second']);
    expect(change.skipped).toEqual(['third']);
    expect(set.names()).toEqual(['second', 'best']);
  });

  it('keeps one tool larger than the whole share rather than leaving the set empty', () => {
    const set = new LoadedSet(300);
    set.load([tool('a'), tool('b')]);
    const change = set.load([tool('huge', 5000)]);
    expect(change.loaded).toEqual(['huge']);
    expect(change.unloaded).toEqual(['b', 'a']);
    expect(set.names()).toEqual(['huge']);
    expect(set.tokens).toBe(5000);
  });
});
