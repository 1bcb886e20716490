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
    expect(serverText('x'.repeat(500))).toHaveLength(201);
  });

  it('reads a hostile page in one pass: 200,000 unclosed tags are just an HTML page', () => {
    expect(serverText(`<${'<pre>'.repeat(200_000)}`)).toBe('an HTML page');
    expect(serverText(`<html>${'İ'.repeat(50)}<pre>ok</pre>`)).toBe('an HTML page: ok');
  });
});
