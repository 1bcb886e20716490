import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../model/json.ts';
import { createRedactor, noRedaction, REDACTED } from './redaction.ts';
import { tokenTrieSource, trieSource } from './trie.ts';

const secret = 'mcp-tok_9f8e7d6c5b4a3921';

/** Each way a server may send the secret back, and how to read the encoded text again. */
const encodings: Record<string, { encode: (s: string) => string; decode: (s: string) => string }> =
  {
    verbatim: { encode: (s) => s, decode: (s) => s },
    json: { encode: (s) => JSON.stringify(s), decode: (s) => s },
    url: { encode: encodeURIComponent, decode: (s) => safely(() => decodeURIComponent(s)) },
    form: {
      encode: (s) => new URLSearchParams({ q: s }).toString(),
      decode: (s) => safely(() => new URLSearchParams(s).get('q') ?? ''),
    },
    hex: {
      encode: (s) => Buffer.from(s).toString('hex'),
      decode: (s) => Buffer.from(s, 'hex').toString('latin1'),
    },
    HEX: {
      encode: (s) => Buffer.from(s).toString('hex').toUpperCase(),
      decode: (s) => Buffer.from(s, 'hex').toString('latin1'),
    },
    base64: {
      encode: (s) => Buffer.from(s).toString('base64'),
      decode: (s) => Buffer.from(s, 'base64').toString('latin1'),
    },
    base64url: {
      encode: (s) => Buffer.from(s).toString('base64url'),
      decode: (s) => Buffer.from(s, 'base64url').toString('latin1'),
    },
  };

function safely(read: () => string): string {
  try {
    return read();
  } catch {
    return '';
  }
}

describe('createRedactor', () => {
  it('removes the secret in every encoding, alone and inside a longer encoded value', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(encodings)),
        fc.string({ maxLength: 12 }),
        fc.string({ maxLength: 12 }),
        fc.string({ minLength: 12, maxLength: 40 }),
        (name, before, after, key) => {
          const { encode, decode } = encodings[name]!;
          const redactor = createRedactor([key]);
          const sent = encode(`${before}${key}${after}`);
          const back = redactor.text(`result: ${sent} (end)`);
          expect(back).toContain(REDACTED);
          // What is left, read back in the same encoding, no longer holds the secret.
          const rest = back.slice('result: '.length, -' (end)'.length).split(REDACTED).join('');
          expect(decode(rest)).not.toContain(key);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('removes masked forms that keep both ends of the secret visible', () => {
    const redactor = createRedactor([secret]);
    expect(redactor.text('Incorrect API key provided: mcp-****3921.')).toBe(
      `Incorrect API key provided: ${REDACTED}.`,
    );
    expect(redactor.text('key mcp-••••••')).toBe(`key ${REDACTED}`);
  });

  it('redacts every string of a JSON value, keys included, and keeps what had nothing to remove', () => {
    const redactor = createRedactor([secret]);
    const clean = { a: [1, 'two', { three: null }] };
    expect(redactor.json(clean)).toBe(clean);
    expect(
      redactor.json({ headers: { authorization: `Bearer ${secret}` }, [secret]: [secret, 3] }),
    ).toEqual({ headers: { authorization: `Bearer ${REDACTED}` }, [REDACTED]: [REDACTED, 3] });
  });

  it('holds secrets added later, ignores values too short to be credentials', () => {
    const redactor = createRedactor();
    expect(redactor.text(`x ${secret} x`)).toBe(`x ${secret} x`);
    redactor.hold(secret);
    redactor.hold('abc');
    expect(redactor.text(`x ${secret} abc x`)).toBe(`x ${REDACTED} abc x`);
    expect(noRedaction.text(secret)).toBe(secret);
  });

  it('matches secrets holding characters that mean something in a pattern', () => {
    const odd = 'a.b*c+d?(e)[f]{g}|h\\i^j$k/l-m';
    const redactor = createRedactor([odd]);
    expect(redactor.text(`see ${odd}!`)).toBe(`see ${REDACTED}!`);
    expect(redactor.text('see aXb*c+d?(e)[f]{g}|h\\i^j$k/l-m!')).not.toContain(REDACTED);
  });
});

describe('the encoded forms servers and tools print', () => {
  const key = 'tok_Abc123+/xyz987';
  const redactor = createRedactor([key]);
  const gone = (shown: string) => {
    const back = redactor.text(`before ${shown} after`);
    expect(back).toContain(REDACTED);
    return back;
  };

  it('removes base64 wrapped at 76 columns, and hex separated by spaces or colons', () => {
    const long = Buffer.from(`${'x'.repeat(70)}${key}${'y'.repeat(40)}`).toString('base64');
    const wrapped = long.replace(/(.{76})/g, '$1\n');
    expect(wrapped).toContain('\n');
    const back = gone(wrapped);
    expect(Buffer.from(back.split(REDACTED).join(''), 'base64').toString('latin1')).not.toContain(
      key,
    );
    const hex = Buffer.from(key).toString('hex').match(/../g) ?? [];
    gone(hex.join(':'));
    gone(hex.join(' ').toUpperCase());
    // xxd: groups of two bytes.
    gone(
      (
        Buffer.from(key)
          .toString('hex')
          .match(/.{1,4}/g) ?? []
      ).join(' '),
    );
  });

  it('removes \\u-escaped and fully percent-encoded forms, and any mix of them', () => {
    const escaped = Array.from(
      key,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ).join('');
    expect(gone(escaped)).toBe(`before ${REDACTED} after`);
    const percent = Array.from(Buffer.from(key), (b) => `%${b.toString(16).toUpperCase()}`).join(
      '',
    );
    expect(gone(percent)).toBe(`before ${REDACTED} after`);
    const mixed = `tok_\\u0041bc%31%32%33+/xyz987`;
    expect(gone(mixed)).toBe(`before ${REDACTED} after`);
  });

  it('removes HTML character references, decimal, hex and named, alone or mixed', () => {
    const decimal = Array.from(key, (c) => `&#${c.charCodeAt(0)};`).join('');
    expect(gone(decimal)).toBe(`before ${REDACTED} after`);
    const hex = Array.from(key, (c) => `&#X${c.charCodeAt(0).toString(16).toUpperCase()};`).join(
      '',
    );
    expect(gone(hex)).toBe(`before ${REDACTED} after`);
    const padded = Array.from(key, (c, i) => (i % 2 === 0 ? `&#00${c.charCodeAt(0)};` : c)).join(
      '',
    );
    expect(gone(padded)).toBe(`before ${REDACTED} after`);
    const amp = createRedactor(['tok&lt_<amp>9']);
    expect(amp.text('x tok&amp;lt_&lt;amp&gt;9 y')).toBe(`x ${REDACTED} y`);
  });

  it('removes a copy whose case was changed', () => {
    expect(gone(key.toLowerCase())).toBe(`before ${REDACTED} after`);
    expect(gone(key.toUpperCase())).toBe(`before ${REDACTED} after`);
  });

  it('redacts a JSON value nested 10,000 deep without overflowing the stack', () => {
    let deep: JsonValue = key;
    for (let i = 0; i < 10_000; i++) deep = i % 2 ? { k: deep } : [deep];
    let out: JsonValue = redactor.json(deep);
    for (let i = 9_999; i >= 0; i--)
      out = i % 2 ? (out as { k: JsonValue }).k : (out as JsonValue[])[0]!;
    expect(out).toBe(REDACTED);
  });
});

describe('trieSource', () => {
  const flat = (words: readonly string[]) =>
    new RegExp(
      [...new Set(words)]
        .sort((a, b) => b.length - a.length)
        .map((w) => w.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
        .join('|'),
      'g',
    );

  it('matches exactly what the longest-first alternation of the same words matches', () => {
    const seed = Date.now() % 2 ** 31;
    console.log(`trieSource property: seed ${seed}`);
    // A small alphabet, so words share prefixes and contain each other.
    const word = fc.string({
      unit: fc.constantFrom('a', 'b', '.', '(', '-', '\\'),
      minLength: 1,
      maxLength: 8,
    });
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 12 }),
        fc.string({ unit: fc.constantFrom('a', 'b', '.', '(', '-', '\\', ' '), maxLength: 60 }),
        (words, text) => {
          const trie = new RegExp(trieSource(words), 'g');
          expect(text.replace(trie, '#')).toBe(text.replace(flat(words), '#'));
        },
      ),
      { seed, numRuns: 500 },
    );
  });

  it('keeps a thousand secrets to one branch per distinct next character', () => {
    const words = Array.from({ length: 1000 }, (_, i) => `token-agent-${1000 + i}`);
    const source = trieSource(words);
    // The shared prefix is written once, not a thousand times.
    expect(source.split('token').length - 1).toBe(1);
    expect('ask token-agent-1999 and token-agent-19990'.replace(new RegExp(source, 'g'), '#')).toBe(
      'ask # and #0',
    );
  });
});

describe('tokenTrieSource', () => {
  const hexTokens = (word: string) =>
    (Buffer.from(word).toString('hex').match(/../g) ?? []).map((h) =>
      Array.from(h, (d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join(''),
    );

  it('writes a prefix that a thousand words of tokens share once, the join between tokens', () => {
    const words = Array.from({ length: 1000 }, (_, i) => `token-agent-${1000 + i}`);
    const source = tokenTrieSource(words.map(hexTokens), '[ :]{0,2}');
    // `t` then `o`: the two bytes' tokens with the join between them, written once.
    expect(source.split('74[ :]{0,2}6[fF]').length - 1).toBe(1);
    const pattern = new RegExp(source, 'g');
    const spaced = (word: string) =>
      (Buffer.from(word).toString('hex').match(/../g) ?? []).join(':');
    expect(`id ${spaced('token-agent-1999')} end`.replace(pattern, '#')).toBe('id # end');
    expect(
      `xxd ${Buffer.from('token-agent-1500').toString('hex').toUpperCase()}`.replace(pattern, '#'),
    ).toBe('xxd #');
    // A word that is a prefix of another: the longer one wins where both match.
    const nested = new RegExp(
      tokenTrieSource(
        [
          ['a', 'b'],
          ['a', 'b', 'c'],
        ],
        '-?',
      ),
      'g',
    );
    expect('ab-c ab a-b'.replace(nested, '#')).toBe('# # #');
  });

  it('redacts the hex, escaped and base64 forms of one of a thousand held secrets', () => {
    const secrets = Array.from({ length: 1000 }, (_, i) => `token-agent-${1000 + i}`);
    const redactor = createRedactor(secrets);
    const secret = 'token-agent-1234';
    const hex = (Buffer.from(secret).toString('hex').match(/../g) ?? []).join(' ');
    const escaped = Array.from(
      secret,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ).join('');
    for (const form of [hex, escaped])
      expect(redactor.text(`before ${form} after`)).toBe(`before ${REDACTED} after`);
    // Base64 keeps the characters it shares with what follows the secret (see base64Fragments).
    const base64 = Buffer.from(secret).toString('base64');
    expect(redactor.text(`before ${base64} after`)).toMatch(
      new RegExp(`^before \\[redacted\\][A-Za-z0-9+/=]{0,4} after$`),
    );
    // Their neighbours, not held, are left alone.
    const other = (Buffer.from('token-agent-2345').toString('hex').match(/../g) ?? []).join(' ');
    expect(redactor.text(`x ${other}`)).toBe(`x ${other}`);
  });
});

describe('a text redacted again', () => {
  it('is redacted under what is held now, not what was held when it was first seen', () => {
    const redactor = createRedactor(['sk-first-0123456789']);
    const line = 'token sk-later-9876543210 in a log line';
    expect(redactor.text(line)).toBe(line);
    redactor.hold('sk-later-9876543210');
    expect(redactor.text(line)).toBe(`token ${REDACTED} in a log line`);
    expect(redactor.text(line)).toBe(`token ${REDACTED} in a log line`);
  });
});
