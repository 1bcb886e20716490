import type { Definition } from '../tool/definition.ts';
import { documentTerms, stem, words } from './search-terms.ts';

/**
 * Where an operation comes from, as tool_search names it: a first-party package by its id, a
 * remote MCP server by the operator's slug (remote definitions carry `mcp.<slug>` as package).
 */
export type ToolSource =
  | { readonly kind: 'package'; readonly id: string }
  | { readonly kind: 'provider'; readonly slug: string };

/** One connected integration in tool_search's description. */
export interface Integration {
  readonly source: ToolSource;
  readonly operations: number;
  /** A short line saying what it is for: its commonest subjects, or its first description. */
  readonly purpose: string;
}

/** The integrations listed by name in tool_search's description; the rest are counted. */
export const MAX_LISTED_INTEGRATIONS = 16;
/** Subjects per integration line: enough to say what it is for, few enough to stay small. */
const TOPICS_PER_LINE = 3;
const PURPOSE_CHARS = 40;

/** The source of a definition. */
export function sourceOf(d: Definition): ToolSource {
  return d.origin.source === 'remote'
    ? { kind: 'provider', slug: d.origin.packageId.replace(/^mcp\./, '') }
    : { kind: 'package', id: d.origin.packageId };
}

/** The source's label: a package id or a provider slug. */
export function sourceLabel(s: ToolSource): string {
  return s.kind === 'package' ? s.id : s.slug;
}

// Verbs say what an operation does, not what it is about: the subjects are the rest of its name.
const NAME_VERBS = new Set(
  (
    'create get list update delete search add read write set remove edit move push fork merge ' +
    'post reply run make open close show fetch find toggle trigger return put patch upsert ' +
    'multiple all new specific detail details info simulate simulated perform take'
  )
    .split(' ')
    .map(stem),
);

/** The part of a tool's name after the provider's `slug__`. */
function localName(d: Definition): string {
  const name = d.tool.name;
  const cut = name.indexOf('__');
  return d.origin.source === 'remote' && cut > 0 ? name.slice(cut + 2) : name;
}

/** The commonest subjects of a group's operation names: adjacent pairs ("pull request") first. */
function topics(definitions: readonly Definition[], label: string): string[] {
  const own = new Set(words(label).map(stem));
  const count = new Map<string, { n: number; first: number; text: string }>();
  const bump = (key: string, text: string, at: number) => {
    const seen = count.get(key);
    if (seen) seen.n++;
    else count.set(key, { n: 1, first: at, text });
  };
  let at = 0;
  for (const d of definitions) {
    const subject = words(localName(d)).filter((w) => {
      const s = stem(w);
      return w.length > 1 && !own.has(s) && !NAME_VERBS.has(s) && documentTerms(w).length > 0;
    });
    subject.forEach((w, i) => {
      bump(stem(w), w, at++);
      const next = subject[i + 1];
      if (next !== undefined) bump(`${stem(w)} ${stem(next)}`, `${w} ${next}`, at++);
    });
  }
  const ranked = [...count.entries()]
    .filter(([key, v]) => !key.includes(' ') || v.n >= 2)
    .sort(
      (a, b) =>
        b[1].n - a[1].n ||
        (b[0].includes(' ') ? 1 : 0) - (a[0].includes(' ') ? 1 : 0) ||
        a[1].first - b[1].first,
    );
  const covered = new Set<string>();
  const out: string[] = [];
  for (const [key, v] of ranked) {
    const parts = key.split(' ');
    if (parts.every((p) => covered.has(p))) continue;
    parts.forEach((p) => covered.add(p));
    out.push(v.text);
    if (out.length === TOPICS_PER_LINE) break;
  }
  return out;
}

/**
 * The first clause of a description (up to its first stop, semicolon or parenthesis), cut at a
 * word to at most `max` characters.
 */
export function firstLine(text: string, max: number): string {
  const sentence = (text.split(/(?<=[.!?])\s|\n|\s*[;(]/)[0] ?? '').trim().replace(/\s+/g, ' ');
  if (sentence.length <= max) return sentence.replace(/[.]$/, '');
  const cut = sentence.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[,;:]$/, '')}…`;
}

/** The integrations of a set of definitions, in the order they first appear. */
export function integrationsOf(definitions: readonly Definition[]): Integration[] {
  const groups = new Map<string, { source: ToolSource; members: Definition[] }>();
  for (const d of definitions) {
    const source = sourceOf(d);
    const key = `${source.kind}:${sourceLabel(source)}`;
    const group = groups.get(key);
    if (group) group.members.push(d);
    else groups.set(key, { source, members: [d] });
  }
  return [...groups.values()].map(({ source, members }) => {
    const all = topics(members, sourceLabel(source));
    // A subject that only spells the label again ("sequential_thinking: sequentialthinking")
    // says nothing the label does not: the label is then the whole line.
    const label = words(sourceLabel(source)).join('');
    const subjects = all.filter((t) => words(t).join('') !== label);
    const purpose =
      subjects.length > 0
        ? subjects.join(', ')
        : all.length > 0
          ? ''
          : firstLine(members[0]?.tool.description ?? '', PURPOSE_CHARS);
    return { source, operations: members.length, purpose };
  });
}

/**
 * The bounded summary tool_search carries: one short line per integration (label and purpose),
 * at most {@link MAX_LISTED_INTEGRATIONS} of them, the rest counted. It is paid for on every
 * request on the index, so it names what each integration is for and no more: the operation
 * counts are left to the search's own answer.
 */
export function renderIntegrations(integrations: readonly Integration[]): string {
  const listed = integrations.slice(0, MAX_LISTED_INTEGRATIONS);
  const rest = integrations.slice(MAX_LISTED_INTEGRATIONS);
  const lines = listed.map((i) =>
    i.purpose === '' ? sourceLabel(i.source) : `${sourceLabel(i.source)}: ${i.purpose}`,
  );
  if (rest.length > 0) {
    const ops = rest.reduce((n, i) => n + i.operations, 0);
    lines.push(`and ${rest.length} more (${ops} operations)`);
  }
  return lines.join('; ');
}
