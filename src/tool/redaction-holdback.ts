/**
 * Where the part of a growing text that may still become a held secret begins. Redaction removes
 * a secret once it is whole; a text shown while it is still being written (a streamed reply) could
 * end in the first 21 of a key's 22 characters, which no redaction can match yet. Whatever from
 * that point could be the start of a held secret, in any literal form the redactor knows or
 * escaped character by character, is held back until the text goes on (decision 0043).
 */

import { buildTrie, type TrieNode } from './trie.ts';

/** Finds the start of a text's tail that could still grow into a held secret. */
export interface Holdback {
  /** The index where `text`'s possibly-secret tail begins; `text.length` when there is none. */
  start(text: string): number;
}

/**
 * The holdback for `secrets`, each with the literal `forms` the redactor matches (verbatim,
 * JSON-escaped, URL-encoded, hex, base64 fragments). Literal forms are walked as one trie from each position of the last
 * (longest form) characters; the percent- and `\u`-escaped spellings, mixed character by
 * character, are tried only when the tail holds an escape.
 */
export function createHoldback(
  secrets: readonly { readonly secret: string; readonly forms: readonly string[] }[],
): Holdback {
  const forms = buildTrie(secrets.flatMap((s) => s.forms));
  const verbatim = buildTrie(secrets.map((s) => s.secret));
  // Thousands of forms: a fold, not a spread into Math.max's arguments.
  const longest = secrets.reduce((m, s) => s.forms.reduce((n, f) => Math.max(n, f.length), m), 0);
  // An escaped character is at most 6 long (`\u00e9`; `%c3%a9` is 6 too).
  const escapedLongest = 6 * secrets.reduce((m, s) => Math.max(m, s.secret.length), 0);

  function literalStart(text: string): number {
    for (let i = Math.max(0, text.length - longest + 1); i < text.length; i++) {
      let node: TrieNode | undefined = forms;
      for (let j = i; j < text.length && node; j++) node = node.next.get(text[j] ?? '');
      if (node) return i;
    }
    return text.length;
  }

  function escapedStart(text: string): number {
    const from = Math.max(0, text.length - escapedLongest);
    if (!/%|\\/.test(text.slice(from))) return text.length;
    for (let i = from; i < text.length; i++) if (reachesEnd(text, i, verbatim)) return i;
    return text.length;
  }

  return {
    start(text) {
      if (secrets.length === 0 || text === '') return text.length;
      return Math.min(literalStart(text), escapedStart(text));
    },
  };
}

const HEX = /^[0-9a-fA-F]*$/;

/**
 * Whether `text` from `i` to its end spells the start of a word of `root`, each character written
 * as itself, `%XX` per UTF-8 byte, `\uXXXX`, or `+` for a space, in any mix; an escape cut off by
 * the end of the text could still become any character.
 */
function reachesEnd(text: string, i: number, root: TrieNode): boolean {
  const walk = (j: number, node: TrieNode): boolean => {
    if (j >= text.length) return node !== root;
    const c = text[j] ?? '';
    const step = (char: string, next: number): boolean => {
      const child = node.next.get(char);
      return child !== undefined && walk(next, child);
    };
    if (c === '%') {
      const hex = text.slice(j + 1, j + 3);
      if (hex.length < 2 && HEX.test(hex)) return node.next.size > 0; // cut inside the escape
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        const decoded = percentChar(text, j);
        if (decoded && step(decoded.char, decoded.end)) return true;
      }
    } else if (c === '\\') {
      const rest = text.slice(j + 1, j + 6);
      if (rest.length < 5 && /^(u[0-9a-fA-F]*)?$/.test(rest)) return node.next.size > 0;
      if (/^u[0-9a-fA-F]{4}$/.test(rest)) {
        if (step(String.fromCharCode(parseInt(rest.slice(1), 16)), j + 6)) return true;
      }
    } else if (c === '+' && step(' ', j + 1)) return true;
    return step(c, j + 1);
  };
  return walk(i, root);
}

/** The character `%XX` escapes at `j` (with the `%XX` bytes after it, for UTF-8), and where it ends. */
function percentChar(text: string, j: number): { char: string; end: number } | undefined {
  const bytes: number[] = [];
  let end = j;
  while (text[end] === '%' && /^[0-9a-fA-F]{2}$/.test(text.slice(end + 1, end + 3))) {
    bytes.push(parseInt(text.slice(end + 1, end + 3), 16));
    end += 3;
    const first = bytes[0] ?? 0;
    const length = first < 0x80 ? 1 : first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : 2;
    if (bytes.length === length) {
      const char = Buffer.from(bytes).toString('utf8');
      return char.includes('\ufffd') ? undefined : { char: Array.from(char)[0] ?? '', end };
    }
  }
  return undefined;
}
