import { checkUrlAtRegistration, EgressRefusedError } from '../../egress/address-policy.ts';
import type { ErrorCode } from '../../tool/error-codes.ts';
import { hasCode, MeshError } from '../../tool/errors.ts';
import { isLoopbackHost } from '../mcp/providers.ts';

/** How a family of registered backends names what a vendor URL check refers to. */
export interface BackendUrlRule {
  /** The input field the URL came in: `base_url`, `api_url`. */
  readonly field: string;
  /** Whether the development setting is on, and the input field that sets it. */
  readonly development: boolean;
  readonly developmentField: string;
  /** The family's refusal code: `invalid_backend`, `invalid_web_provider`. */
  readonly code: ErrorCode;
}

/**
 * A registered backend's vendor URL as stored: https, or plain http to loopback with the
 * development setting; never with credentials, a query or a fragment; and no address outside the
 * public space (private, link-local, metadata; loopback without the development setting) as far
 * as that is known without DNS (a name is resolved and checked on every request by the guarded
 * fetch). The one check every family that stores a vendor URL applies. A refusal names the input
 * field, which each face says its own way, and never the URL.
 */
export function checkBackendUrl(raw: string, rule: BackendUrlRule): string {
  const refuse = (problem: string) =>
    new MeshError(rule.code, `\`${rule.field}\` ${problem}`, { field: `input.${rule.field}` });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.username || url.password) throw refuse('must not carry credentials');
  if (url.search || url.hash) throw refuse('must not have a query or fragment');
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(loopbackHttp && rule.development))
    throw refuse(`must be https (plain http only to loopback, with \`${rule.developmentField}\`)`);
  try {
    checkUrlAtRegistration(url, { allowLoopbackHttp: rule.development });
  } catch (error) {
    if (hasCode(error, EgressRefusedError.code)) throw refuse(`is refused: ${error.message}`);
    throw error;
  }
  return url.toString().replace(/\/+$/, '');
}
