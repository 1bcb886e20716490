import type { SearchResult } from '../provider.ts';

/** Long enough to judge a result by, short enough that twenty fit in one tool result. */
export const SNIPPET_MAX_CHARS = 500;
const TITLE_MAX_CHARS = 300;

/** One search result as a provider gave it, its fields still unchecked. */
export interface RawSearchResult {
  readonly title?: unknown;
  readonly url?: unknown;
  readonly snippet?: unknown;
  readonly publishedAt?: unknown;
}

/**
 * The provider's results in the seam's shape, at most `count` of them: results without an
 * http(s) URL are dropped (a model cannot cite or read them), the rest normalized by
 * {@link normalizeResult}.
 */
export function normalizeResults(
  raw: readonly RawSearchResult[],
  count: number,
): readonly SearchResult[] {
  const results: SearchResult[] = [];
  for (const item of raw) {
    if (results.length >= count) break;
    const result = normalizeResult(item);
    if (result !== undefined) results.push(result);
  }
  return Object.freeze(results);
}

/**
 * Plain-text title (the URL's host when there is none) and snippet, the URL as parsed, and the
 * date as ISO 8601 when the provider's date can be read; undefined without an http(s) URL.
 */
export function normalizeResult(raw: RawSearchResult): SearchResult | undefined {
  const url = httpUrl(raw.url);
  if (url === undefined) return undefined;
  const title = typeof raw.title === 'string' ? plainText(raw.title, TITLE_MAX_CHARS) : '';
  const snippet = typeof raw.snippet === 'string' ? plainText(raw.snippet, SNIPPET_MAX_CHARS) : '';
  const publishedAt = typeof raw.publishedAt === 'string' ? isoDate(raw.publishedAt) : undefined;
  return Object.freeze({
    title: title === '' ? url.host : title,
    url: url.href,
    snippet,
    ...(publishedAt === undefined ? {} : { publishedAt }),
  });
}

/** True for a JSON object (what a provider's body or one of its entries should be). */
export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` as an absolute http(s) URL, or undefined. */
export function httpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  const url = URL.parse(value.trim());
  return url !== null && (url.protocol === 'https:' || url.protocol === 'http:') ? url : undefined;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
};
/** Tags that separate words; every other tag (`<strong>`, `<em>`) sits inside a word's flow. */
const BREAKING_TAG = /<\/?(?:br|p|div|li|ul|ol|tr|td|th|h[1-6])\b[^<>]*>/gi;
/** Only what looks like a tag: "a < b > c" stays as it is. */
const ANY_TAG = /<\/?[A-Za-z][^<>]*>/g;
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9A-Fa-f]{1,6})|([A-Za-z]{2,8}));/g;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/**
 * `text` as one line of plain text: tags removed, character references decoded, control
 * characters dropped, whitespace collapsed, and cut to `max` characters (ending in "…").
 */
export function plainText(text: string, max: number): string {
  const plain = text
    .replace(BREAKING_TAG, ' ')
    .replace(ANY_TAG, '')
    .replace(ENTITY, decodeEntity)
    .replace(CONTROL, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (plain.length <= max) return plain;
  let cut = plain.slice(0, max - 1);
  // Never end on the first half of a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

function decodeEntity(entity: string, dec?: string, hex?: string, name?: string): string {
  if (name !== undefined) return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  const code = dec !== undefined ? Number(dec) : Number.parseInt(hex ?? '', 16);
  const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
  return valid ? String.fromCodePoint(code) : entity;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME =
  /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const NAMES_A_ZONE = /\b(?:GMT|UTC|Z)\b|[+-]\d{2}:?\d{2}$/i;

/**
 * A provider's date as ISO 8601, or undefined when it cannot be read. A date stays a date
 * (`2024-01-15`); a date-time becomes UTC. A date-time that names no zone is taken as UTC, never
 * as this machine's local time, so the answer does not depend on where Mesh runs. Relative ages
 * ("2 days ago") are not dates and give undefined.
 */
export function isoDate(value: string): string | undefined {
  const text = value.trim();
  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly !== null) {
    const [, y, m, d] = dateOnly.map(Number) as [number, number, number, number];
    const date = new Date(Date.UTC(y, m - 1, d));
    return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d
      ? text
      : undefined;
  }
  const iso = ISO_DATE_TIME.exec(text);
  if (iso !== null) {
    const at = Date.parse(
      iso[1] === undefined ? `${text.replace(' ', 'T')}Z` : text.replace(' ', 'T'),
    );
    return Number.isNaN(at) ? undefined : new Date(at).toISOString();
  }
  // Free-form dates ("Mon, 15 Jan 2024 10:00:00 GMT", "January 15, 2024") must name a year:
  // Date.parse reads almost anything, "7" included.
  if (!/\b\d{4}\b/.test(text)) return undefined;
  const parsed = new Date(text);
  if (Number.isNaN(parsed.getTime())) return undefined;
  if (NAMES_A_ZONE.test(text)) return parsed.toISOString();
  // Parsed as local time: keep the wall-clock fields, in UTC.
  return new Date(
    Date.UTC(
      parsed.getFullYear(),
      parsed.getMonth(),
      parsed.getDate(),
      parsed.getHours(),
      parsed.getMinutes(),
      parsed.getSeconds(),
      parsed.getMilliseconds(),
    ),
  ).toISOString();
}
