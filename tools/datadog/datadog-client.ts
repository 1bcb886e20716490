import type * as V1 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v1/index.js';
import type * as V2 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v2/index.js';
import type { ToolContext } from '../../src/tool/context.ts';
import { DeliveryError } from '../../src/tool/outbound.ts';
import { API_KEY_KIND, APP_KEY_KIND, type DatadogSettings } from './settings.ts';

// The SDK is large (its v2 half takes over a second to load), so it is imported on first use,
// one API version at a time: a process that never calls Datadog never loads it, and the v1 tools
// never load v2. The deep paths are the SDK's own per-version entry points (what its index
// re-exports as `client`, `v1` and `v2`; the package has no exports map).

export interface V1Apis {
  readonly metrics: V1.MetricsApi;
  readonly monitors: V1.MonitorsApi;
  readonly events: V1.EventsApi;
}

export interface V2Apis {
  readonly logs: V2.LogsApi;
  readonly downtimes: V2.DowntimesApi;
}

/** The SDK's API classes for one call, authenticated as the agent's own Datadog user. */
export interface Datadog {
  v1(): Promise<V1Apis>;
  v2(): Promise<V2Apis>;
  /** Seconds until the rate limit resets, as the last answer's `X-RateLimit-Reset` said. */
  rateLimitResetS(): number | undefined;
}

/**
 * A client for one call. Requests go to the configured base URL (the SDK's `baseServer`, which
 * takes precedence over its site variables and the DD_SITE environment), with the agent's own keys
 * as `DD-API-KEY` and `DD-APPLICATION-KEY`. The SDK's own retries are off (`enableRetry: false`):
 * the outbound machinery decides what is retried, and a retry the SDK made of an answer that was
 * lost would be a second event behind its back. Redirects are not followed: the keys are headers
 * a redirect would carry elsewhere.
 */
export async function connect(ctx: ToolContext, settings: DatadogSettings): Promise<Datadog> {
  const [apiKey, appKey] = [await ctx.secret(API_KEY_KIND), await ctx.secret(APP_KEY_KIND)];
  // The SDK logs each failed request itself (through its own loglevel logger, which nothing else
  // here uses); the handler turns each failure into an observation instead.
  const sdkLog = (await import('@datadog/datadog-api-client/dist/logger.js')) as {
    logger: { setLevel(level: string): void };
  };
  sdkLog.logger.setLevel('silent');
  const common =
    await import('@datadog/datadog-api-client/dist/packages/datadog-api-client-common/index.js');
  let resetS: number | undefined;
  const fetchThrough = async (url: string, init: RequestInit): Promise<Response> => {
    const response = await ctx.fetch(url, { ...init, redirect: 'manual', signal: ctx.signal });
    const reset = response.headers.get('x-ratelimit-reset');
    resetS = reset !== null && /^[0-9]{1,6}$/.test(reset.trim()) ? Number(reset) : undefined;
    return response;
  };
  const configuration = common.createConfiguration({
    baseServer: new common.BaseServerConfiguration(settings.apiUrl, {}),
    authMethods: { apiKeyAuth: apiKey, appKeyAuth: appKey },
    enableRetry: false,
    fetch: fetchThrough,
    httpConfig: { compress: false },
  });
  let v1: Promise<V1Apis> | undefined;
  let v2: Promise<V2Apis> | undefined;
  return {
    v1: () =>
      (v1 ??=
        import('@datadog/datadog-api-client/dist/packages/datadog-api-client-v1/index.js').then(
          (m) => ({
            metrics: new m.MetricsApi(configuration),
            monitors: new m.MonitorsApi(configuration),
            events: new m.EventsApi(configuration),
          }),
        )),
    v2: () =>
      (v2 ??=
        import('@datadog/datadog-api-client/dist/packages/datadog-api-client-v2/index.js').then(
          (m) => ({
            logs: new m.LogsApi(configuration),
            downtimes: new m.DowntimesApi(configuration),
          }),
        )),
    rateLimitResetS: () => resetS,
  };
}

/** What an SDK error says, read by shape (an ApiException's `code` and `body`), never by class. */
export interface DatadogFailure {
  readonly status: number;
  /** Datadog's `errors` strings, shortened; empty when the body had none. */
  readonly errors: readonly string[];
}

export function datadogFailure(error: unknown): DatadogFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; body?: unknown };
  if (typeof e.code !== 'number' || !('body' in e)) return undefined;
  const body = (typeof e.body === 'object' && e.body !== null ? e.body : {}) as {
    errors?: unknown;
  };
  const errors = Array.isArray(body.errors)
    ? body.errors
        .filter((m): m is string => typeof m === 'string')
        .slice(0, 3)
        .map((m) => m.slice(0, 300))
    : [];
  return { status: e.code, errors };
}

/** The observation for keys Datadog refuses: names the secrets to capture, never their values. */
export const BAD_KEYS_TEXT =
  `Datadog refused this agent's keys (HTTP 403 Forbidden). The operator needs to capture a valid ` +
  `${API_KEY_KIND} and ${APP_KEY_KIND} for this agent in its mesh.datadog settings (an API key ` +
  `of the agent's Datadog organization, and an application key of the agent's own Datadog user); ` +
  `until then no Datadog call can succeed. If both are valid, the application key lacks the ` +
  `permission (scope) this call needs.`;

function reasons(failure: DatadogFailure): string {
  return failure.errors.length === 0 ? '' : `: ${failure.errors.join('; ')}`;
}

/** Text for a failed call (a query tool's observation, a terminal delivery's reason). */
export function failureText(what: string, settings: DatadogSettings, error: unknown): string {
  const failure = datadogFailure(error);
  if (!failure)
    return `Datadog at ${settings.apiUrl} could not be reached for ${what}, or its answer was not understood.`;
  switch (failure.status) {
    case 401:
    case 403:
      return BAD_KEYS_TEXT;
    case 400:
      return `Datadog refused ${what} as invalid (HTTP 400)${reasons(failure)}.`;
    case 404:
      return `Datadog found nothing for ${what} (HTTP 404)${reasons(failure)}.`;
    case 429:
      return `Datadog rate-limited ${what} (HTTP 429); try again shortly.`;
    default:
      return `Datadog answered ${what} with HTTP ${failure.status}${reasons(failure)}.`;
  }
}

/**
 * What a failed Datadog write means for its effect. Datadog did not act on refused keys, an
 * invalid request or a rate limit (retried after `X-RateLimit-Reset`); a 5xx or a dropped
 * connection may have acted, which the effect's lookup settles.
 */
export function deliveryError(
  what: string,
  settings: DatadogSettings,
  client: Datadog,
  error: unknown,
): DeliveryError {
  const failure = datadogFailure(error);
  if (!failure)
    return new DeliveryError(
      'ambiguous',
      `Datadog at ${settings.apiUrl} could not be reached for ${what}, or its answer was lost`,
      { cause: error },
    );
  if (failure.status === 429) {
    const reset = client.rateLimitResetS();
    return new DeliveryError('retryable', `Datadog rate-limited ${what}`, {
      ...(reset === undefined ? {} : { retryAfterMs: reset * 1000 }),
    });
  }
  if (failure.status >= 500)
    return new DeliveryError('ambiguous', `Datadog answered ${what} with HTTP ${failure.status}`);
  return new DeliveryError('terminal', failureText(what, settings, error));
}
