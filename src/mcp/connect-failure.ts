import type { FetchLike } from '@modelcontextprotocol/client';

/**
 * Why a remote MCP server could not be used, named for what happened: a refused credential, a
 * missing one, a legacy HTTP+SSE endpoint, no MCP endpoint at the URL, or what the server said
 * (never a raw HTML page, never more than a line of it).
 */

/** How the connection authenticates, when the caller knows. */
export type CredentialKind = 'none' | 'bearer' | 'oauth';

/** The HTTP status an SDK failure carries (`SdkHttpError`), if any. */
function httpStatus(error: unknown): number | undefined {
  const status = (error as { data?: { status?: unknown } } | null)?.data?.status;
  return typeof status === 'number' ? status : undefined;
}

function isSdkUnauthorized(error: unknown): boolean {
  return error instanceof Error && error.name === 'UnauthorizedError';
}

/** The characters of a server's answer looked at: enough for any message worth showing. */
const MAX_SERVER_TEXT = 16 * 1024;

/** A short, safe rendering of what a server answered: one line, no markup, bounded. */
export function serverText(text: string): string {
  const head = text.slice(0, MAX_SERVER_TEXT);
  if (/^\s*</.test(head)) {
    const pre = between(head, 'pre') ?? between(head, 'title');
    return pre ? `an HTML page: ${oneLine(pre)}` : 'an HTML page';
  }
  return oneLine(head);
}

/**
 * The text of the first `<tag>…</tag>`, found with two index scans: a lazy regular expression
 * rescans to the end from every unclosed `<pre>`, which is quadratic in what a server sends.
 */
function between(html: string, tag: 'pre' | 'title'): string | undefined {
  const open = new RegExp(`<${tag}>`, 'i').exec(html);
  if (!open) return undefined;
  const start = open.index + open[0].length;
  const closing = new RegExp(`</${tag}>`, 'ig');
  closing.lastIndex = start;
  const close = closing.exec(html);
  return close ? html.slice(start, close.index) : undefined;
}

/**
 * One line of at most 200 characters, cut between words: a word cut in half would show a prefix
 * of whatever it is (a token the server echoed), which redaction, matching whole values, misses.
 */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= 200) return line;
  const cut = line.lastIndexOf(' ', 200);
  return cut > 0 ? `${line.slice(0, cut)} …` : '(an answer of one long word, not shown)';
}

/** A request the server did not answer in time (the SDK's `REQUEST_TIMEOUT`), named; else undefined. */
export function describeTimeout(error: unknown, timeoutMs: number): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== 'REQUEST_TIMEOUT') return undefined;
  return `the server ${unansweredWithin(timeoutMs)}`;
}

/** What a server that accepted a request and said nothing within its timeout did not do. */
export function unansweredWithin(timeoutMs: number): string {
  return `did not answer within ${timeoutMs / 1000} s (the provider's request timeout)`;
}

/** The failure of a request (or of connecting) with an HTTP status, named; undefined otherwise. */
export function describeHttpFailure(
  error: unknown,
  credential: CredentialKind,
): string | undefined {
  const status = isSdkUnauthorized(error) ? 401 : httpStatus(error);
  if (status === 401) {
    switch (credential) {
      case 'none':
        return 'the server requires authorization (401) and this connection has no credential: connect with a token or with OAuth';
      case 'bearer':
        return "the server refused the agent's bearer token (401): it is wrong, expired or revoked; connect again with a valid token";
      case 'oauth':
        return "the server refused the agent's OAuth access token (401), also after refreshing it: authorize the connection again";
      default: {
        const never: never = credential;
        return never;
      }
    }
  }
  if (status === 403)
    return "the server refused the agent's account this access (403): the credential lacks a scope or a permission it needs";
  if (status === undefined) return undefined;
  const text = (error as { data?: { text?: unknown } }).data?.text;
  const said = typeof text === 'string' && text.trim() !== '' ? `: ${serverText(text)}` : '';
  if (status === 404) return `no MCP endpoint answers at this URL (404)${said}`;
  return `the server answered HTTP ${status}${said}`;
}

/**
 * Whether `url` is a legacy HTTP+SSE endpoint (protocol 2024-11-05): a GET that asks for an event
 * stream gets one. Only the response head is read; the stream is cancelled at once.
 */
export async function isLegacySseEndpoint(url: string, fetch: FetchLike): Promise<boolean> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 5_000);
  try {
    const response = await fetch(url, {
      method: 'GET',
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const type = response.headers.get('content-type') ?? '';
    await response.body?.cancel().catch(() => undefined);
    return response.ok && type.toLowerCase().startsWith('text/event-stream');
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** Why connecting failed, named; falls back to `fallback` (the failure's own message). */
export async function describeConnectFailure(
  error: unknown,
  attempt: {
    readonly url: string;
    readonly fetch: FetchLike;
    readonly credential: CredentialKind;
    readonly timeoutMs: number;
  },
  fallback: string,
): Promise<string> {
  const late = describeTimeout(error, attempt.timeoutMs);
  if (late) return late;
  const status = isSdkUnauthorized(error) ? 401 : httpStatus(error);
  // A Streamable HTTP endpoint takes POST; a legacy SSE one refuses it (404/405) but streams a GET.
  if (
    status !== undefined &&
    status !== 401 &&
    status !== 403 &&
    (await isLegacySseEndpoint(attempt.url, attempt.fetch))
  )
    return 'this URL is a legacy HTTP+SSE endpoint (MCP 2024-11-05), which Mesh does not speak: register the server’s Streamable HTTP endpoint instead, if it has one';
  return describeHttpFailure(error, attempt.credential) ?? fallback;
}
