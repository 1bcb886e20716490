import { MeshError } from '../../tool/errors.ts';
import { isLoopbackHost } from '../mcp/providers.ts';

/**
 * A registered backend's vendor URL as stored: https, or plain http to loopback on a backend the
 * operator marked `development`; never with credentials. A refusal names the input field the URL
 * came in (`api_url`, `base_url`), which each face says its own way.
 */
export function checkBackendUrl(raw: string, development: boolean, field: string): string {
  const refuse = (problem: string) =>
    new MeshError('invalid_backend', `\`${field}\` ${problem}`, { field: `input.${field}` });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.username || url.password) throw refuse('must not carry credentials');
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(loopbackHttp && development))
    throw refuse('must be https (plain http only to loopback, on a `development` backend)');
  return url.toString().replace(/\/$/, '');
}
