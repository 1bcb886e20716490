import type { JsonValue } from '../model/json.ts';

// Shared by the packages that call a vendor API at a configurable base URL (tools/github,
// tools/linear, tools/slack): one rule for which URLs a package may be pointed at.
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A base URL from the agent's settings, normalized, or why it is refused. Only https, except
 * plain http to a loopback host when `allow_loopback_http` is on (development against a local
 * fake). Messages name the setting, never its value.
 */
export function checkBaseUrl(
  key: string,
  value: JsonValue | undefined,
  allowLoopbackHttp: boolean,
): { ok: true; url: string } | { ok: false; problem: string } {
  if (typeof value !== 'string' || value.trim() === '')
    return { ok: false, problem: `the setting \`${key}\` is empty or not a string` };
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return { ok: false, problem: `the setting \`${key}\` is not an absolute URL` };
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return {
      ok: false,
      problem: `the setting \`${key}\` may not carry credentials, a query or a fragment`,
    };
  const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(loopbackHttp && allowLoopbackHttp)) {
    return {
      ok: false,
      problem:
        `the setting \`${key}\` must be an https URL` +
        (loopbackHttp
          ? '; plain http to this machine is allowed only when `allow_loopback_http` is true (development only)'
          : ''),
    };
  }
  return { ok: true, url: url.href.replace(/\/+$/, '') };
}
