import { BrowserBackendUnavailableError } from '../backend.ts';

/** How long one request to a vendor's session API may take. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * One JSON request to a browser vendor's session API, through the guarded fetch it is handed.
 * A failure is the backend's unavailability, naming the vendor, the step and the status — never
 * the key or the vendor's body (which may echo what was sent).
 */
export async function vendorJson(
  fetch: typeof globalThis.fetch,
  vendor: string,
  what: string,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: unknown; signal?: AbortSignal },
): Promise<{ status: number; json: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method,
      headers: {
        accept: 'application/json',
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: init.signal
        ? AbortSignal.any([init.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
        : AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new BrowserBackendUnavailableError(
      `${vendor} ${what} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

/** Refuses an answer that is not a success, naming the status only. */
export function requireOk(vendor: string, what: string, status: number): void {
  if (status < 200 || status >= 300)
    throw new BrowserBackendUnavailableError(`${vendor} ${what} failed: HTTP ${status}`);
}

/** A string field of an object, or undefined. */
export function field(json: unknown, name: string): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const value = (json as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
