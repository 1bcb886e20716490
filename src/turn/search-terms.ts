import { stemmer } from 'stemmer';
import { SYNONYMS } from './search-synonyms.ts';
import { ABBREVIATIONS, EQUIVALENTS, PHRASES, STOP_WORDS } from './search-vocabulary.ts';

/*
 * How tool_search reads text. Operation names are identifiers (`get_pull_request_files`,
 * `listDirectoryWithSizes`, `get-env`) and people write sentences ("which files changed in that
 * PR?"), so both sides go through one pipeline: identifiers are split at `_`, `-`, `.` and
 * camelCase humps; words are lower-cased; common abbreviations become their words; words that
 * carry no meaning for finding an operation are dropped; the rest is Porter-stemmed ("changed",
 * "changes" → "chang"). A query is first rewritten where a phrase misleads word by word ("file
 * a bug"), then widened with what its words mean in the words operations use, at lower weights,
 * so the words the person actually used rank first.
 */

/** The weight of a word that means the same as one the query said ("bug" → issue). */
export const EQUIVALENT_WEIGHT = 0.8;
/** The weight of a word the query did not contain but a synonym of one of its words did. */
export const SYNONYM_WEIGHT = 0.45;

/** Splits identifiers and prose into lower-cased words (before stop words and stemming). */
export function words(text: string): string[] {
  const spaced = text
    // camelCase and PascalCase humps; an acronym before a word ("HTMLParser" → "HTML Parser"),
    // but not a plural one ("PRs", "URLs").
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll}{2,})/gu, '$1 $2');
  return spaced
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

const stems = new Map<string, string>();
/** The Porter stem of one lower-cased word (memoized: the vocabulary of tools is small). */
export function stem(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    s = stemmer(word);
    if (stems.size < 50_000) stems.set(word, s);
  }
  return s;
}

/** The stems of `word` after its abbreviation is spelled out, without stop words. */
function meaningful(word: string): string[] {
  const out: string[] = [];
  for (const w of ABBREVIATIONS[word] ?? [word])
    if (w.length > 1 && !STOP_WORDS.has(w)) out.push(stem(w));
  return out;
}

/** The terms of a document: every meaningful word, stemmed, abbreviations spelled out. */
export function documentTerms(text: string): string[] {
  return words(text).flatMap(meaningful);
}

function byStem(source: Readonly<Record<string, string>>): ReadonlyMap<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [word, list] of Object.entries(source)) {
    const key = stem(word);
    const own = out.get(key) ?? [];
    for (const s of list.split(' ').map(stem)) if (s !== key && !own.includes(s)) own.push(s);
    out.set(key, own);
  }
  return out;
}
const SYNONYM_STEMS = byStem(SYNONYMS);
const EQUIVALENT_STEMS = byStem(EQUIVALENTS);

/**
 * A query's terms with their weights: its own words at 1, what their equivalents add at
 * {@link EQUIVALENT_WEIGHT}, their synonyms at {@link SYNONYM_WEIGHT} (the highest wins).
 */
export function queryTerms(text: string): Map<string, number> {
  let phrased = text;
  for (const [pattern, replacement] of PHRASES) phrased = phrased.replace(pattern, replacement);
  const said = words(phrased).flatMap(meaningful);
  const weights = new Map<string, number>(said.map((s) => [s, 1]));
  const widen = (term: string, weight: number) =>
    weights.set(term, Math.max(weights.get(term) ?? 0, weight));
  for (const s of said) {
    for (const equivalent of EQUIVALENT_STEMS.get(s) ?? []) widen(equivalent, EQUIVALENT_WEIGHT);
    for (const synonym of SYNONYM_STEMS.get(s) ?? []) widen(synonym, SYNONYM_WEIGHT);
  }
  return weights;
}
