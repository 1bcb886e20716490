import { describe, expect, it } from 'vitest';
import { main } from './main.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

describe('mesh CLI', () => {
  it('prints usage for --help and no arguments', async () => {
    for (const argv of [['--help'], [], ['help']]) {
      const c = capture();
      expect(await main(argv, c.io)).toBe(0);
      expect(c.out.join('')).toContain('Usage: mesh <command>');
    }
  });

  it('refuses an unknown command with exit code 2', async () => {
    const c = capture();
    expect(await main(['frobnicate'], c.io)).toBe(2);
    expect(c.err.join('')).toContain('unknown command "frobnicate"');
  });
});
