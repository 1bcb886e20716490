import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoDate, normalizeResult, normalizeResults, plainText } from './normalize.ts';

describe('isoDate', () => {
  it.each([
    ['2024-01-15', '2024-01-15'],
    ['2024-01-15T10:00:00Z', '2024-01-15T10:00:00.000Z'],
    ['2024-01-15T10:00:00.547Z', '2024-01-15T10:00:00.547Z'],
    ['2024-01-15T10:00:00+02:00', '2024-01-15T08:00:00.000Z'],
    // No zone named: UTC, never this machine's local time.
    ['2024-01-15T10:00:00', '2024-01-15T10:00:00.000Z'],
    ['2024-01-15 10:00', '2024-01-15T10:00:00.000Z'],
    ['Mon, 15 Jan 2024 10:00:00 GMT', '2024-01-15T10:00:00.000Z'],
    ['January 15, 2024', '2024-01-15T00:00:00.000Z'],
  ])('%s is %s', (given, expected) => {
    expect(isoDate(given)).toBe(expected);
  });

  it.each(['', '2 days ago', '7', 'yesterday', '2024-02-30', '2024-13-01T00:00:00Z', 'not a date'])(
    '%j is no date',
    (given) => {
      expect(isoDate(given)).toBeUndefined();
    },
  );

  it('reads back any instant written as ISO 8601 or as an HTTP date', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('1990-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        }),
        (date) => {
          expect(isoDate(date.toISOString())).toBe(date.toISOString());
          const seconds = new Date(Math.floor(date.getTime() / 1000) * 1000);
          expect(isoDate(date.toUTCString())).toBe(seconds.toISOString());
        },
      ),
    );
  });
});

describe('plainText', () => {
  it('removes tags, keeping words apart where a tag broke them', () => {
    expect(plainText('The <strong>fast</strong> way<br>next <p>para</p>', 100)).toBe(
      'The fast way next para',
    );
  });

  it('leaves text that only looks a little like a tag', () => {
    expect(plainText('a < b > c and x<y', 100)).toBe('a < b > c and x<y');
  });

  it('decodes named and numeric character references, leaving unknown ones', () => {
    expect(plainText('A &amp; B&#x27;s &#8212; &quot;q&quot; &bogus; &#0;', 100)).toBe(
      'A & B\'s — "q" &bogus; &#0;',
    );
  });

  it('cuts at the limit with an ellipsis, never inside a surrogate pair', () => {
    expect(plainText('abcdefghij', 5)).toBe('abcd…');
    expect(plainText('abc😀def', 5)).toBe('abc…');
  });

  it('is one trimmed line within the limit, without control characters, whatever it is given', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.integer({ min: 2, max: 600 }), (text, max) => {
        const plain = plainText(text, max);
        expect(plain.length).toBeLessThanOrEqual(max);
        expect(plain).toBe(plain.trim());
        expect(plain).not.toMatch(/\s\s/);
        // eslint-disable-next-line no-control-regex -- the property is that none remain
        expect(plain).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/);
      }),
    );
  });
});

describe('normalizeResult', () => {
  it('drops a result without an http(s) URL', () => {
    for (const url of [
      undefined,
      42,
      '',
      'relative/path',
      'ftp://x.example/',
      'javascript:alert(1)',
    ]) {
      expect(normalizeResult({ title: 't', url, snippet: 's' })).toBeUndefined();
    }
  });

  it("titles a result without one by its URL's host, and omits a date it cannot read", () => {
    expect(
      normalizeResult({ url: 'https://nodejs.org/api', snippet: 42, publishedAt: 'soon' }),
    ).toEqual({
      title: 'nodejs.org',
      url: 'https://nodejs.org/api',
      snippet: '',
    });
  });

  it('keeps at most count results, counting only the kept ones', () => {
    const raw = [
      { url: 'ftp://x.example/' },
      { url: 'https://a.example/' },
      { url: 'https://b.example/' },
      { url: 'https://c.example/' },
    ];
    expect(normalizeResults(raw, 2).map((r) => r.url)).toEqual([
      'https://a.example/',
      'https://b.example/',
    ]);
  });
});
