import { MeshError } from '../../tool/errors.ts';
import { isLoopbackHost } from '../mcp/providers.ts';

/**
 * A registered backend's vendor URL as stored: https, or plain http to loopback with the
 * operator's development setting (`--dev`); never with credentials. `what` names it in a refusal
 * ("the API URL", "the base URL").
 */
export function checkBackendUrl(raw: string, development: boolean, what: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MeshError('invalid_backend', `${what} is not a URL`);
  }
  if (url.username || url.password)
    throw new MeshError('invalid_backend', `${what} must not carry credentials`);
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(loopbackHttp && development))
    throw new MeshError(
      'invalid_backend',
      `${what} must be https (plain http only to loopback, with --dev)`,
    );
  return url.toString().replace(/\/$/, '');
}
