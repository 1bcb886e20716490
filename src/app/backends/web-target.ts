import { classifyAddress } from '../../egress/address-policy.ts';
import { MeshError } from '../../tool/errors.ts';

/**
 * The page a model asks a provider to read. The provider fetches it, not Mesh, but a provider
 * (or a self-hosted gateway) inside the operator's network would fetch an internal address for
 * us, so the same line is drawn here, by name, before any provider is called: a public http(s)
 * URL without credentials. Names that only mean something inside a network are refused too.
 */

export const MAX_URL_LENGTH = 2048;

/** Suffixes that name hosts inside a network (RFC 6761, RFC 6762, RFC 8375, common practice). */
const INTERNAL_SUFFIXES = [
  'localhost',
  'local',
  'internal',
  'intranet',
  'lan',
  'home.arpa',
  'corp',
];

export class ReadTargetError extends MeshError {
  static readonly code = 'read_target_refused';
  constructor(
    readonly reason: 'not_a_url' | 'scheme' | 'credentials' | 'too_long' | 'private_host',
    message: string,
  ) {
    super(ReadTargetError.code, message, { reason });
  }
}

/** The URL to hand a provider, or a refusal naming what is wrong (never echoing the URL). */
export function checkReadTarget(raw: string): URL {
  if (raw.length > MAX_URL_LENGTH)
    throw new ReadTargetError('too_long', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ReadTargetError('not_a_url', 'the URL is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ReadTargetError(
      'scheme',
      `scheme ${url.protocol} is not allowed (http or https only)`,
    );
  if (url.username !== '' || url.password !== '')
    throw new ReadTargetError('credentials', 'credentials in the URL are not allowed');
  const host = url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.$/, '');
  const kind = classifyAddress(host);
  if (kind !== 'invalid') {
    if (kind !== 'public')
      throw new ReadTargetError(
        'private_host',
        `the host is a ${kind.replace('_', '-')} address; only public hosts can be read`,
      );
    return url;
  }
  if (!host.includes('.'))
    throw new ReadTargetError(
      'private_host',
      'the host is a single-label name, which only resolves inside a network',
    );
  const internal = INTERNAL_SUFFIXES.find((s) => host === s || host.endsWith(`.${s}`));
  if (internal !== undefined)
    throw new ReadTargetError(
      'private_host',
      `hosts under .${internal} are inside a network; only public hosts can be read`,
    );
  return url;
}
