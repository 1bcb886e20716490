import { describe, expect, it } from 'vitest';
import { createRedactor } from './redaction.ts';

describe('holding back the unfinished tail of a text being written', () => {
  const key = 'sk-live-4f9Qz7Lm2Xc8Vb';
  const redactor = createRedactor([key]);
  const shown = (text: string) => text.slice(0, redactor.unfinished(text));

  it('holds back any tail that is the start of a held secret, in its literal forms', () => {
    expect(shown(`key: ${key.slice(0, 21)}`)).toBe('key: ');
    expect(shown(`key: ${key.slice(0, 3)}`)).toBe('key: ');
    expect(shown(`key=${encodeURIComponent(key).slice(0, 10)}`)).toBe('key=');
    expect(shown(`b64 ${Buffer.from(key).toString('base64').slice(0, 12)}`)).toBe('b64 ');
    expect(shown('nothing held here.')).toBe('nothing held here.');
  });

  it('holds back a start escaped character by character, even cut inside an escape', () => {
    const mixed = `s%6b-\\u006ci`;
    expect(shown(`say ${mixed}`)).toBe('say ');
    expect(shown('say s%6')).toBe('say ');
    expect(shown('say s\\u00')).toBe('say ');
    // A lone '%' could begin an escaped character: held until the next one shows it is not.
    expect(shown('100%')).toBe('100');
    expect(shown('100% done.')).toBe('100% done.');
  });

  it('shows what follows a secret that was finished and redacted', () => {
    const text = redactor.text(`key: ${key}. Done`);
    expect(shown(text)).toBe('key: [redacted]. Done');
  });

  it('keeps its cost bounded by the longest form, not the text, at 1,000 held secrets', () => {
    const many = createRedactor(Array.from({ length: 1000 }, (_, i) => `tok_${i}_abcdefghijkl`));
    const text = `${'lorem ipsum '.repeat(20_000)}tok_99`;
    expect(text.slice(many.unfinished(text))).toBe('tok_99');
    const escaped = `${'a%20b '.repeat(2_000)}tok%5f9`;
    expect(escaped.slice(many.unfinished(escaped))).toBe('tok%5f9');
  });
});
