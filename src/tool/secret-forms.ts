/**
 * The forms a secret may come back in that are exact strings: what the redactor removes as one
 * trie (src/tool/redaction.ts), and what a streamed text's tail is held back for.
 */

/** An encoded fragment shorter than this is not matched (it would match ordinary text). */
export const MIN_FORM_LENGTH = 6;

/**
 * The literal forms of `secret`: verbatim (and lower- and upper-cased), JSON-escaped, URL-encoded (both percent and form
 * encoding, either hex case), hex of its UTF-8 bytes (either case), and base64 and base64url at
 * each of the three byte alignments it can sit at inside a longer encoded value.
 */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const percent = encodeURIComponent(secret);
  const forms = [
    secret,
    // A copy whose case was changed (a header or a log that lower-cases what it prints).
    secret.toLowerCase(),
    secret.toUpperCase(),
    JSON.stringify(secret).slice(1, -1),
    percent,
    percent.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    percent.replaceAll('%20', '+'),
    new URLSearchParams({ s: secret }).toString().slice('s='.length),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
  ];
  for (const base64 of base64Fragments(bytes)) {
    forms.push(base64, base64.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return forms;
}

/**
 * The base64 text that `bytes` always encodes to, wherever it sits in a longer value: for each
 * offset 0–2 (mod 3) at which the secret may start, the characters that depend on the secret's
 * bytes alone. Characters shared with the neighbouring bytes are left out, so the fragment is a
 * substring of the encoding of any value that contains the secret at that offset.
 */
export function base64Fragments(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    // A character covers 6 bits; it is the secret's alone when it starts at or after bit 8·offset
    // and ends at or before the last bit of the secret.
    const first = Math.ceil((8 * offset) / 6);
    const last = Math.floor((8 * padded.length) / 6);
    const fragment = encoded.slice(first, last);
    if (fragment.length >= MIN_FORM_LENGTH) out.push(fragment);
  }
  return out;
}
