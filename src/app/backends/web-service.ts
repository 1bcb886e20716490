import { capabilitiesOf, createQueryProviderAdapter } from '../../web/adapters/index.ts';
import {
  QueryProviderError,
  type QueryProviderAdapter,
  type QueryProviderFailure,
  type QueryProviderKind,
  type SearchFilter,
} from '../../web/provider.ts';
import { withRetries } from '../../web/retry.ts';
import { checkReadTarget, ReadTargetError } from './web-target.ts';
import { budgetFrom, usageFrom } from '../../run/budget.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { Db } from '../../store/db.ts';
import { grantedQueryProviders, type QueryProviderRecord } from '../../store/query-providers.ts';
import { getRun } from '../../store/runs.ts';
import type { ToolContext } from '../../tool/context.ts';
import { hasCode } from '../../tool/errors.ts';
import {
  WEB_READ,
  WEB_SEARCH,
  WebProviderError,
  type Served,
  type WebFailure,
  type WebPage,
  type WebRead,
  type WebSearch,
  type WebSearchHit,
  type WebSearchQuery,
} from '../../../tools/web/web-service.ts';

/** The query providers behind the web verbs: which one serves an agent, its key, its ceiling. */
export interface QueryProviderRuntime extends WebSearch, WebRead {}

export interface QueryProviderRuntimeOptions {
  /** Attempts per call at most, retries included (each counts against the ceiling). */
  readonly maxAttempts?: number;
  /** The first retry's delay; tests shorten it. */
  readonly baseDelayMs?: number;
}

type Use = 'search' | 'read';

function canServe(record: QueryProviderRecord, use: Use): boolean {
  const caps = capabilitiesOf(record.kind);
  return use === 'search' ? caps.search !== undefined : caps.read;
}

/** The provider that serves `use` for an agent: the first it was granted that can. */
export async function servingProvider(
  db: Db,
  agentId: string,
  use: Use,
): Promise<QueryProviderRecord | undefined> {
  return (await grantedQueryProviders(db, agentId)).find((p) => canServe(p, use));
}

/**
 * The web verbs' services an agent has no provider for, with the reason the run shows: each is
 * offered only when a provider the agent was granted can serve it.
 */
export async function unservedWebVerbs(db: Db, agentId: string): Promise<Map<string, string>> {
  const granted = await grantedQueryProviders(db, agentId);
  const gaps = new Map<string, string>();
  if (!granted.some((p) => canServe(p, 'search')))
    gaps.set(
      WEB_SEARCH.id,
      'needs a web search provider; none is granted to this agent (mesh web grant)',
    );
  if (!granted.some((p) => canServe(p, 'read')))
    gaps.set(
      WEB_READ.id,
      'needs a web reading provider; none is granted to this agent (mesh web grant)',
    );
  return gaps;
}

/** What the model reads for each failure: what happened and who can fix it. */
function failureText(reason: QueryProviderFailure, provider: string, calls: number): string {
  const after = calls > 1 ? ` after ${calls} attempts` : '';
  switch (reason) {
    case 'bad_credential':
      return `web provider ${provider} refused its credential; an operator replaces the key with \`mesh web add\` (remove and re-add) — this is not something you can fix`;
    case 'rate_limited':
      return `web provider ${provider} is rate-limiting requests${after}; try again later or go on without it`;
    case 'provider_down':
      return `web provider ${provider} is unavailable${after}; try again later or go on without it`;
    case 'bad_request':
      return `web provider ${provider} refused the request; rephrase it`;
    case 'unreadable':
      return `web provider ${provider} could not read that page; try another URL`;
    case 'unsupported':
      return `web provider ${provider} cannot do that`;
  }
}

/** The first filter of `query` that providers of `kind` do not support, said by name. */
function unsupportedFilter(kind: QueryProviderKind, query: WebSearchQuery): string | undefined {
  const filters = capabilitiesOf(kind).search?.filters ?? new Set<SearchFilter>();
  const asked: [SearchFilter, boolean][] = [
    ['recency', query.recency !== undefined],
    ['include_domains', (query.includeDomains?.length ?? 0) > 0],
    ['exclude_domains', (query.excludeDomains?.length ?? 0) > 0],
  ];
  const missing = asked.find(([filter, used]) => used && !filters.has(filter));
  return missing
    ? `this agent's search provider does not support the ${missing[0]} filter; search without it`
    : undefined;
}

/** The adapter for a provider row, with its API key revealed for this use. */
async function adapterFor(
  secrets: SecretStore,
  record: QueryProviderRecord,
): Promise<QueryProviderAdapter> {
  const apiKey = await secrets.reveal({
    ownerType: 'tool_provider',
    ownerId: record.id,
    kind: 'api_key',
  });
  if (apiKey === undefined)
    throw new WebProviderError(
      'bad_credential',
      `web provider ${record.name} has no API key captured; an operator re-adds it with \`mesh web add --api-key-file\``,
      { provider: record.name, calls: 0 },
    );
  return createQueryProviderAdapter(record.kind, {
    baseUrl: record.baseUrl,
    apiKey,
    settings: record.settings,
    timeoutMs: record.requestTimeoutMs,
    allowLoopbackHttp: record.allowLoopbackHttp,
  });
}

/**
 * The run's ceiling for this provider, and the calls left in it. The ceiling is the one the run
 * copied when it was created; a provider granted since (or a run from before ceilings were
 * copied) has the provider's ceiling as it is now.
 */
async function ceilingOf(
  db: Db,
  ctx: ToolContext,
  record: QueryProviderRecord,
): Promise<{ ceiling: number; left: number }> {
  const run = await getRun(db, ctx.runId);
  if (!run) return { ceiling: record.maxCallsPerRun, left: 0 };
  const ceiling = budgetFrom(run.budget).providerCalls[record.name] ?? record.maxCallsPerRun;
  return { ceiling, left: ceiling - (usageFrom(run.usage).providerCalls[record.name] ?? 0) };
}

export function createQueryProviderRuntime(
  deps: { db: Db; secrets: SecretStore },
  options: QueryProviderRuntimeOptions = {},
): QueryProviderRuntime {
  const { db, secrets } = deps;
  const maxAttempts = options.maxAttempts ?? 3;

  async function serve<T>(
    ctx: ToolContext,
    use: Use,
    call: (adapter: QueryProviderAdapter) => Promise<T>,
    refusal?: (kind: QueryProviderKind) => string | undefined,
  ): Promise<Served<T>> {
    const record = await servingProvider(db, ctx.agentId, use);
    if (!record)
      throw new WebProviderError(
        'no_provider',
        `no web ${use === 'search' ? 'search' : 'reading'} provider is granted to this agent; an operator grants one with \`mesh web grant\``,
        { calls: 0 },
      );
    // What the provider cannot do is refused before it is called, so it costs nothing.
    const refused = refusal?.(record.kind);
    if (refused !== undefined)
      throw new WebProviderError('unsupported', refused, { provider: record.name, calls: 0 });
    const { ceiling, left } = await ceilingOf(db, ctx, record);
    if (left <= 0)
      throw new WebProviderError(
        'quota_exhausted',
        `budget exhausted: the run's ceiling of ${ceiling} calls to web provider ${record.name} is spent (an operator sets it with \`mesh web set --max-calls-per-run\`)`,
        { provider: record.name, calls: 0, exhausted: true },
      );
    let calls = 0;
    try {
      // A row the adapter cannot use (a key gone empty, a bad setting) fails here, unsent.
      const adapter = await adapterFor(secrets, record);
      const value = await withRetries(() => call(adapter), {
        maxAttempts: Math.min(maxAttempts, left),
        signal: ctx.signal,
        onAttempt: () => {
          calls += 1;
        },
        ...(options.baseDelayMs === undefined ? {} : { baseDelayMs: options.baseDelayMs }),
      });
      return { provider: record.name, calls, value };
    } catch (error) {
      if (!hasCode(error, QueryProviderError.code)) throw error;
      const reason = (error as QueryProviderError).reason;
      const text =
        reason === 'unsupported'
          ? (error as Error).message
          : failureText(reason, record.name, calls) +
            (calls >= left ? `; this run's ${ceiling} calls to it are now spent` : '');
      throw new WebProviderError(reason satisfies WebFailure, text, {
        provider: record.name,
        calls,
      });
    }
  }

  return {
    search(ctx, query: WebSearchQuery): Promise<Served<readonly WebSearchHit[]>> {
      return serve(
        ctx,
        'search',
        async (adapter) => {
          const max = adapter.capabilities.search?.maxCount ?? query.count;
          const hits = await adapter.search({
            query: query.query,
            count: Math.min(query.count, max),
            ...(query.recency ? { recency: query.recency } : {}),
            ...(query.includeDomains ? { includeDomains: query.includeDomains } : {}),
            ...(query.excludeDomains ? { excludeDomains: query.excludeDomains } : {}),
            signal: ctx.signal,
          });
          return hits.slice(0, query.count);
        },
        (kind) => unsupportedFilter(kind, query),
      );
    },
    async read(ctx, raw: string): Promise<Served<WebPage>> {
      let url: string;
      try {
        url = checkReadTarget(raw).toString();
      } catch (error) {
        if (!hasCode(error, ReadTargetError.code)) throw error;
        throw new WebProviderError('unsafe_url', (error as Error).message, { calls: 0 });
      }
      return serve(ctx, 'read', async (adapter) => {
        const page = await adapter.read({ url, signal: ctx.signal });
        return {
          url: page.url,
          ...(page.title ? { title: page.title } : {}),
          markdown: page.markdown,
        };
      });
    },
  };
}
