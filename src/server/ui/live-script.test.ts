import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { LIVE_SCRIPT } from './live-script.ts';

describe('the live script', () => {
  it('is valid JavaScript as served (a syntax error would leave every page static)', () => {
    // Compiled, not run: a syntax error throws here.
    expect(() => new Script(LIVE_SCRIPT, { filename: 'live.js' })).not.toThrow();
  });
});
