import MiniSearch from 'minisearch';
import type { JsonSchema } from '../model/json.ts';
import type { Definition } from '../tool/definition.ts';
import {
  firstLine,
  integrationsOf,
  sourceLabel,
  sourceOf,
  type ToolSource,
} from './integration-summary.ts';
import { documentTerms, queryTerms } from './search-terms.ts';

/** One operation a search found, best first. */
export interface ToolMatch {
  /** The name as offered to the model (`tracker__create_issue`). */
  readonly name: string;
  /** The first sentence of its description. */
  readonly description: string;
  readonly source: ToolSource;
  /** BM25+ relevance; comparable only within one search. */
  readonly score: number;
}

/** A full-text index over a turn's searchable definitions. */
export interface ToolIndex {
  readonly size: number;
  /** The best `limit` matches for a need phrased as a person would; [] when nothing matches. */
  search(query: string, limit: number): ToolMatch[];
}

/** Operations a search returns unless told otherwise, and the most it returns. */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 50;

const DESCRIPTION_CHARS = 120;

/*
 * Field weights. A name says what an operation does in the fewest words, so a word there counts
 * most; the description next; parameter names and descriptions, and the summary of the
 * integration it belongs to, break ties (they repeat across a server's operations).
 */
const BOOST = { name: 3, description: 1.5, parameters: 0.6, integration: 0.5 };

interface IndexedTool {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  readonly parameters: string;
  readonly integration: string;
}

/** Parameter names and descriptions, one level into nested objects and array items. */
function parameterText(schema: JsonSchema, depth = 0): string {
  const properties = (schema as { properties?: Record<string, JsonSchema> }).properties;
  if (typeof properties !== 'object' || properties === null || depth > 1) return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    parts.push(key);
    if (typeof value !== 'object' || value === null) continue;
    const v = value as { description?: unknown; items?: JsonSchema };
    if (typeof v.description === 'string') parts.push(v.description);
    parts.push(parameterText(value, depth + 1));
    if (typeof v.items === 'object' && v.items !== null)
      parts.push(parameterText(v.items, depth + 1));
  }
  return parts.filter((p) => p !== '').join(' ');
}

/**
 * Builds the index (BM25+ ranking from MiniSearch) over name, description, parameter names and
 * descriptions, and the integration's summary line, every field read by {@link documentTerms}.
 */
export function buildToolIndex(definitions: readonly Definition[]): ToolIndex {
  const summaries = new Map(
    integrationsOf(definitions).map((i) => [
      `${i.source.kind}:${sourceLabel(i.source)}`,
      `${sourceLabel(i.source)} ${i.purpose}`,
    ]),
  );
  const byId = definitions.map((d) => ({ definition: d, source: sourceOf(d) }));
  const index = new MiniSearch<IndexedTool>({
    fields: ['name', 'description', 'parameters', 'integration'],
    tokenize: (text) => documentTerms(text),
    processTerm: (term) => term,
  });
  index.addAll(
    byId.map(({ definition: d, source }, id) => ({
      id,
      name: d.tool.name,
      description: d.tool.description,
      parameters: parameterText(d.tool.parameters),
      integration: summaries.get(`${source.kind}:${sourceLabel(source)}`) ?? '',
    })),
  );
  return {
    size: definitions.length,
    search(query, limit) {
      const weights = queryTerms(query);
      if (weights.size === 0) return [];
      const hits = index.search([...weights.keys()].join(' '), {
        tokenize: (text) => text.split(' '),
        processTerm: (term) => term,
        boostTerm: (term) => weights.get(term) ?? 1,
        boost: BOOST,
        combineWith: 'OR',
      });
      return hits.slice(0, Math.max(0, limit)).flatMap((hit) => {
        const entry = byId[hit.id as number];
        if (!entry) return [];
        return [
          {
            name: entry.definition.tool.name,
            description: firstLine(entry.definition.tool.description, DESCRIPTION_CHARS),
            source: entry.source,
            score: hit.score,
          },
        ];
      });
    },
  };
}
