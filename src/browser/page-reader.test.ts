import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { readPageExpression } from './page-reader.ts';

describe('the page reader', () => {
  it('is valid JavaScript as a page evaluates it', () => {
    expect(() => new Script(readPageExpression('snapshot'))).not.toThrow();
  });
});
