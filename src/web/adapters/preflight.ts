import {
  QueryProviderError,
  type QueryProviderCapabilities,
  type QueryProviderConfig,
  type QueryProviderKind,
  type SearchFilter,
  type SearchRequest,
} from '../provider.ts';

/*
 * What an adapter checks before it sends anything: its configuration when it is created, and a
 * search's filters and count on every call. A refusal here costs no request and no quota.
 */

/**
 * The configured API root without a trailing slash, so that `root + '/search'` keeps any path
 * prefix (a gateway's `/gw`). Refuses a config no request could be sent with; the messages name
 * the setting, never its value.
 */
export function checkedRoot(kind: QueryProviderKind, config: QueryProviderConfig): string {
  if (config.apiKey === '') {
    // A missing credential, never an anonymous call (given one, exa-js would read EXA_API_KEY).
    throw new QueryProviderError('bad_credential', `${kind}: the API key is empty`);
  }
  if (!Number.isFinite(config.timeoutMs) || config.timeoutMs <= 0) {
    throw new QueryProviderError('bad_request', `${kind}: timeoutMs must be a positive number`);
  }
  const url = URL.parse(config.baseUrl);
  if (
    url === null ||
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new QueryProviderError(
      'bad_request',
      `${kind}: the base URL must be an absolute http(s) URL without credentials, query or fragment`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** The filters a request uses (an empty domain list is no filter). */
export function filtersOf(request: SearchRequest): SearchFilter[] {
  const used: SearchFilter[] = [];
  if (request.recency !== undefined) used.push('recency');
  if ((request.includeDomains?.length ?? 0) > 0) used.push('include_domains');
  if ((request.excludeDomains?.length ?? 0) > 0) used.push('exclude_domains');
  return used;
}

/**
 * Refuses a search this kind cannot run (no search at all, or a filter it does not support, by
 * name: a silently dropped filter would return results the model did not ask for) and returns
 * the count to ask for, clamped to 1..maxCount.
 */
export function checkedSearch(
  kind: QueryProviderKind,
  capabilities: QueryProviderCapabilities,
  request: SearchRequest,
): number {
  const search = capabilities.search;
  if (search === undefined) throw cannotSearch(kind);
  const unsupported = filtersOf(request).find((filter) => !search.filters.has(filter));
  if (unsupported !== undefined) {
    throw new QueryProviderError(
      'unsupported',
      `${kind} does not support the ${unsupported} filter`,
    );
  }
  const count = Number.isFinite(request.count) ? Math.trunc(request.count) : search.maxCount;
  return Math.min(search.maxCount, Math.max(1, count));
}

export function cannotSearch(kind: QueryProviderKind): QueryProviderError {
  return new QueryProviderError('unsupported', `${kind} cannot search the web`);
}

export function cannotRead(kind: QueryProviderKind): QueryProviderError {
  return new QueryProviderError('unsupported', `${kind} cannot read pages`);
}
