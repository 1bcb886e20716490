import type { JsonValue } from '../model/json.ts';
import { createHoldback, type Holdback } from './redaction-holdback.ts';
import { base64Fragments, MIN_FORM_LENGTH, secretForms } from './secret-forms.ts';
import { escapeRegExp, tokenTrieSource } from './trie.ts';

/**
 * Secrets removed from text that comes back from the outside world — tool results, provider
 * errors, model output, failure reasons, log lines — before it is stored, shown or sent. A
 * server that echoes a credential rarely echoes it verbatim: it arrives base64-encoded inside a
 * `Basic` header, URL-encoded in a query string, hex-dumped, JSON-escaped, or masked with its ends
 * showing. Every one of those forms is removed.
 */

/** What a removed secret is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Secrets shorter than this are not held: redacting every occurrence of a short value would mangle
 * ordinary text, and a credential that short is not a credential.
 */
export const MIN_SECRET_LENGTH = 6;

/** Texts up to this long are remembered with their redaction, at most this many at once. */
const RECENT_MAX_LENGTH = 512;
const RECENT_ENTRIES = 4096;

/** At most this many secrets are held; the oldest is let go first. */
const MAX_HELD = 4096;

/** A secret keeps its first and last few characters visible in a masked form (`sk-ab****wxyz`). */
const MASK_ENDS = 4;

/** Removes held secrets from text and from every string of a JSON value. */
export interface Redactor {
  /** Holds `secret`: from now on each of its forms is removed. Short values are ignored. */
  hold(secret: string): void;
  /**
   * Changes each time what is removed changes (a secret held, or let go to make room): what was
   * redacted under one generation may be reused while it lasts.
   */
  readonly generation: number;
  /** `text` with every form of every held secret replaced by {@link REDACTED}. */
  text(text: string): string;
  /** `value` with every string (keys included) redacted; the same value when nothing matched. */
  json<T extends JsonValue>(value: T): T;
  /**
   * Bytes of any media type with every form of every held secret overwritten by as many `*`s
   * (its length kept, so a binary format's offsets still hold); the same bytes when nothing
   * matched. Read as Latin-1, byte for byte: credentials are ASCII, so each of their forms is.
   */
  bytes(content: Uint8Array): Uint8Array;
  /**
   * Where the tail of a text still being written begins that could grow into a held secret (see
   * redaction-holdback.ts); `text.length` when none could. A live view shows what is before it.
   */
  unfinished(text: string): number;
}

/** A redactor that removes nothing: for callers that hold no secrets (tests, tooling). */
export const noRedaction: Redactor = Object.freeze({
  hold: () => undefined,
  generation: 0,
  text: (text: string) => text,
  json: <T extends JsonValue>(value: T) => value,
  bytes: (content: Uint8Array) => content,
  unfinished: (text: string) => text.length,
});

/** A redactor holding `secrets` (more may be held later). */
export function createRedactor(secrets: Iterable<string> = []): Redactor {
  /** Each held secret with its forms' sources, worked out once when it is held. */
  const held = new Map<string, readonly FormPattern[]>();
  let passes: readonly Pass[] | undefined;
  let holdback: Holdback | undefined;

  const compiled = (): readonly Pass[] => {
    if (passes !== undefined) return passes;
    const by = new Map<FormFamily, Map<string, readonly string[]>>();
    for (const forms of held.values())
      for (const { family, tokens } of forms) {
        let words = by.get(family);
        if (!words) by.set(family, (words = new Map<string, readonly string[]>()));
        words.set(tokens.join('\0'), tokens);
      }
    passes = FAMILIES.flatMap(({ family, trigger, join }) => {
      const words = by.get(family);
      if (!words || words.size === 0) return [];
      // Built on first use: an encoded family's pattern is large, and most texts never trigger it.
      // A trie: at each position one branch per distinct next token is tried, not every form of
      // every secret (decision 0060).
      let pattern: RegExp | undefined;
      return [
        {
          trigger,
          pattern: () => (pattern ??= new RegExp(tokenTrieSource([...words.values()], join), 'g')),
        },
      ];
    });
    return passes;
  };

  // Short texts come again and again (tool names, reasons, a round's ledger lines): each is
  // redacted once under what is held now, and found again by its value.
  const recent = new Map<string, string>();
  const text = (input: string): string => {
    if (input.length < MIN_FORM_LENGTH) return input;
    const short = input.length <= RECENT_MAX_LENGTH;
    if (short) {
      const known = recent.get(input);
      if (known !== undefined) return known;
    }
    let out = input;
    for (const pass of compiled()) {
      if (pass.trigger && !pass.trigger.test(out)) continue;
      const pattern = pass.pattern();
      pattern.lastIndex = 0;
      out = out.replace(pattern, REDACTED);
    }
    if (short) {
      if (recent.size >= RECENT_ENTRIES) recent.clear();
      recent.set(input, out);
    }
    return out;
  };

  const json = <T extends JsonValue>(value: T): T => redactJson(value, text) as T;

  const bytes = (content: Uint8Array): Uint8Array => {
    if (content.byteLength < MIN_FORM_LENGTH) return content;
    const latin1 = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString(
      'latin1',
    );
    let out: Buffer | undefined;
    for (const pass of compiled()) {
      if (pass.trigger && !pass.trigger.test(latin1)) continue;
      const pattern = pass.pattern();
      pattern.lastIndex = 0;
      for (const match of latin1.matchAll(pattern)) {
        out ??= Buffer.from(content);
        out.fill(0x2a, match.index, match.index + match[0].length);
      }
    }
    return out ?? content;
  };

  let generation = 0;
  const redactor: Redactor = {
    hold(secret) {
      if (secret.length < MIN_SECRET_LENGTH || held.has(secret)) return;
      held.set(secret, formPatterns(secret));
      if (held.size > MAX_HELD) held.delete(held.keys().next().value as string);
      passes = undefined;
      holdback = undefined;
      recent.clear();
      generation++;
    },
    get generation() {
      return generation;
    },
    text,
    json,
    bytes,
    unfinished: (input) =>
      (holdback ??= createHoldback(
        [...held.keys()].map((secret) => ({
          secret,
          forms: secretForms(secret).filter((f) => f.length >= MIN_FORM_LENGTH),
        })),
      )).start(input),
  };
  for (const secret of secrets) redactor.hold(secret);
  return Object.freeze(redactor);
}

/**
 * `value` with `text` applied to every string (keys included); the same objects where nothing
 * changed. Walks with an explicit stack, children before their parent, so no nesting depth a
 * server sends (10,000 levels of `structuredContent`) can overflow the call stack.
 */
function redactJson(value: JsonValue, text: (s: string) => string): JsonValue {
  if (typeof value === 'string') return text(value);
  if (value === null || typeof value !== 'object') return value;
  const done = new Map<object, JsonValue>();
  const stack: { node: object; expanded: boolean }[] = [{ node: value, expanded: false }];
  const leaf = (item: JsonValue): JsonValue =>
    typeof item === 'string'
      ? text(item)
      : item !== null && typeof item === 'object'
        ? (done.get(item) as JsonValue)
        : item;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { node: object; expanded: boolean };
    if (!top.expanded) {
      top.expanded = true;
      const children = Array.isArray(top.node) ? top.node : Object.values(top.node);
      for (const child of children as JsonValue[])
        if (child !== null && typeof child === 'object' && !done.has(child))
          stack.push({ node: child, expanded: false });
      continue;
    }
    stack.pop();
    if (done.has(top.node)) continue;
    if (Array.isArray(top.node)) {
      const items = top.node as readonly JsonValue[];
      const out = items.map(leaf);
      done.set(top.node, out.every((item, i) => item === items[i]) ? items : out);
      continue;
    }
    let changed = false;
    const out: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(top.node as Record<string, JsonValue>)) {
      const k = text(key);
      const v = leaf(item);
      if (k !== key || v !== item) changed = true;
      out[k] = v;
    }
    done.set(top.node, changed ? out : (top.node as JsonValue));
  }
  return done.get(value) as JsonValue;
}

/**
 * The families of forms, each compiled into one trie of its forms' tokens (tokenTrieSource in
 * trie.ts), a family's `join` between two tokens. Literal forms run on every text; the encoded
 * families begin with a character class, which V8 tries at every position, so each runs only on a
 * text holding what it could match.
 */
type FormFamily = 'literal' | 'folded' | 'masked' | 'escaped' | 'hex' | 'wrapped';
/** What may hold a family's form: a text that does not pass it is not searched for one. */
interface Trigger {
  test(text: string): boolean;
}
const WRAPPED = /[A-Za-z0-9+/_-]{16}\r?\n[A-Za-z0-9+/_-]/;
const FAMILIES: readonly { family: FormFamily; trigger: Trigger | undefined; join: string }[] = [
  // Exact strings, a character a token.
  { family: 'literal', trigger: undefined, join: '' },
  // A quoted secret with its whitespace folded: only secrets that hold whitespace have one.
  { family: 'folded', trigger: undefined, join: '' },
  { family: 'masked', trigger: /[*•]{3}/, join: '' },
  // A character a token, each in any of its escaped spellings.
  {
    family: 'escaped',
    trigger: /%[0-9a-f]{2}|\\u[0-9a-f]{4}|&#x?[0-9a-f]+;|&[a-z]+;/i,
    join: '',
  },
  // A byte a token, with up to two separators between bytes.
  {
    family: 'hex',
    trigger: /[0-9a-f]{2}[ :][0-9a-f]{2}[ :]?[0-9a-f]{2}|[0-9a-f]{4} [0-9a-f]{4}/i,
    join: '[ :]{0,2}',
  },
  // A base64 character a token, with a line break allowed between any two.
  // Only a text with a line break can hold a wrapped one: looked for first, since the pattern
  // is tried at every position of a long line.
  {
    family: 'wrapped',
    trigger: { test: (text) => text.includes('\n') && WRAPPED.test(text) },
    join: '(?:\\r?\\n)?',
  },
];

interface Pass {
  readonly trigger: Trigger | undefined;
  readonly pattern: () => RegExp;
}

/** A form of a secret: the regular-expression sources of its tokens, in order. */
interface FormPattern {
  readonly family: FormFamily;
  /** Joined by the family's `join` (and made into one trie with every other form of the family). */
  readonly tokens: readonly string[];
}

/** The patterns that match `secret` in each form it may come back in. */
export function formPatterns(secret: string): FormPattern[] {
  const literals = new Set<string>(secretForms(secret));
  // The literal family's forms are the exact strings, a character a token.
  const patterns: FormPattern[] = [...literals]
    .filter((f) => f.length >= MIN_FORM_LENGTH)
    .map((form) => ({ family: 'literal', tokens: Array.from(form, escapeRegExp) }));
  // A quoted secret's whitespace may come back folded (one line, runs of spaces).
  if (/\s/.test(secret))
    patterns.push({
      family: 'folded',
      tokens: [secret.split(/\s+/).map(escapeRegExp).join('\\s+')],
    });
  // Character by character: each as itself, percent-encoded or `\u`-escaped, in any mix (a
  // serializer that escapes some characters, a URL encoder that encodes all of them).
  patterns.push({ family: 'escaped', tokens: Array.from(secret, charPattern) });
  // Hex of its bytes with separators between them: `de:ad:be:ef`, `de ad be ef`, xxd's
  // `dead beef`; either case.
  const hex = Buffer.from(secret, 'utf8').toString('hex').match(/../g) ?? [];
  patterns.push({ family: 'hex', tokens: hex.map(hexDigits) });
  // Base64 and base64url, wrapped at any column (MIME's 76).
  for (const fragment of base64Fragments(Buffer.from(secret, 'utf8')))
    for (const alphabet of [fragment, fragment.replaceAll('+', '-').replaceAll('/', '_')])
      patterns.push({ family: 'wrapped', tokens: Array.from(alphabet, escapeRegExp) });
  // Masked: the first few characters, a run of mask characters, and perhaps the last few.
  if (secret.length >= 3 * MASK_ENDS) {
    const head = escapeRegExp(secret.slice(0, MASK_ENDS));
    const tail = escapeRegExp(secret.slice(-MASK_ENDS));
    patterns.push({ family: 'masked', tokens: [`${head}[*•]{3,}(?:${tail})?`] });
  }
  return patterns;
}

/** Hex digits matched in either case. */
function hexDigits(hex: string): string {
  return Array.from(hex, (d) =>
    /[a-f]/i.test(d) ? `[${d.toLowerCase()}${d.toUpperCase()}]` : d,
  ).join('');
}

/** The named HTML entities of the characters a credential may hold. */
const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/**
 * One character of a secret: itself, `%XX` per UTF-8 byte, `\uXXXX` per UTF-16 unit, or an HTML
 * character reference (`&#67;`, `&#x43;`, leading zeros and either case allowed; `&amp;`…), as a
 * page or an HTML-escaping serializer writes it.
 */
function charPattern(char: string): string {
  const percent = Array.from(Buffer.from(char, 'utf8'), (b) =>
    hexDigits(b.toString(16).padStart(2, '0')),
  )
    .map((h) => `%${h}`)
    .join('');
  const escaped = Array.from({ length: char.length }, (_, i) =>
    hexDigits(char.charCodeAt(i).toString(16).padStart(4, '0')),
  )
    .map((h) => `\\\\u${h}`)
    .join('');
  const code = char.codePointAt(0) ?? 0;
  const alternatives = [
    escapeRegExp(char),
    percent,
    escaped,
    `&#0*${code};`,
    `&#[xX]0*${hexDigits(code.toString(16))};`,
  ];
  const named = NAMED_ENTITIES[char];
  if (named) alternatives.push(escapeRegExp(named));
  if (char === ' ') alternatives.push('\\+');
  return `(?:${alternatives.join('|')})`;
}
