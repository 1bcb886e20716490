import { describe, expect, it } from 'vitest';
import { serverText } from './connect-failure.ts';

describe('what a server answered, as shown', () => {
  it('is one bounded line, with an HTML page reduced to its <pre> or <title>', () => {
    expect(serverText('  bad\n  request  ')).toBe('bad request');
    expect(serverText('<html><PRE>Cannot POST\n /mcp</pre></html>')).toBe(
      'an HTML page: Cannot POST /mcp',
    );
    expect(serverText('<html><title>502 Bad Gateway</title>')).toBe(
      'an HTML page: 502 Bad Gateway',
    );
    expect(serverText('<html><pre>never closed')).toBe('an HTML page');
    expect(serverText('x'.repeat(500))).toBe('(an answer of one long word, not shown)');
    expect(serverText(`${'word '.repeat(60)}`)).toBe(`${'word '.repeat(39)}word …`);
  });

  it('never shows part of a word: a token the server echoed is shown whole (for redaction to find) or not at all', () => {
    const token = 'tok_0123456789abcdefghijklmnopqrstuvwxyz';
    for (let at = 120; at < 210; at++) {
      const shown = serverText(`${'a'.repeat(at)} ${token} was refused`);
      if (shown.includes(token)) continue;
      expect(shown).not.toContain(token.slice(0, 8));
    }
  });

  it('reads a hostile page in one pass: 200,000 unclosed tags are just an HTML page', () => {
    expect(serverText(`<${'<pre>'.repeat(200_000)}`)).toBe('an HTML page');
    expect(serverText(`<html>${'İ'.repeat(50)}<pre>ok</pre>`)).toBe('an HTML page: ok');
  });
});
