import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

/**
 * The proxies whose forwarding headers this server believes: addresses or CIDR ranges
 * (`10.0.0.0/8`, `::1`). A request from anywhere else is taken as it arrived, whatever its
 * `X-Forwarded-*` headers say.
 */
export interface TrustedProxies {
  has(address: string): boolean;
}

/** No proxy is trusted: the default. */
export const NO_TRUSTED_PROXIES: TrustedProxies = Object.freeze({ has: () => false });

/** A bad entry of a trusted-proxy list; the message names its position, not its text. */
export class TrustedProxyListError extends Error {
  override readonly name = 'TrustedProxyListError';
}

function family(address: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/** The trusted proxies of a list of addresses and ranges; throws naming a bad entry's position. */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  if (entries.length === 0) return NO_TRUSTED_PROXIES;
  const list = new BlockList();
  for (const [i, entry] of entries.entries()) {
    const [address = '', bits, extra] = entry.split('/');
    const kind = family(address);
    const prefix = bits === undefined ? undefined : Number(bits);
    const max = kind === 'ipv4' ? 32 : 128;
    if (
      kind === undefined ||
      extra !== undefined ||
      (prefix !== undefined && (!/^\d{1,3}$/.test(bits ?? '') || prefix > max))
    )
      throw new TrustedProxyListError(
        `trusted proxy ${i + 1} is not an IP address or a CIDR range (address/bits)`,
      );
    if (prefix === undefined) list.addAddress(address, kind);
    else list.addSubnet(address, prefix, kind);
  }
  return Object.freeze({
    has: (address: string) => {
      const kind = family(address);
      return kind !== undefined && list.check(address, kind);
    },
  });
}

/** Parses a comma- or space-separated list (`MESH_TRUSTED_PROXIES`). */
export function parseTrustedProxies(text: string | undefined): TrustedProxies {
  const entries = (text ?? '').split(/[\s,]+/).filter((e) => e !== '');
  return trustedProxies(entries);
}

/** How a request reached this server, once the trusted proxies' headers are read. */
export interface ClientOrigin {
  /** The client's address: the peer, or what trusted proxies say they forwarded for. */
  readonly address: string;
  /** Whether the client's request was https: directly, or as a trusted proxy says. */
  readonly https: boolean;
}

/** The address of the socket the request came over; undefined outside a Node server. */
function peerOf(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

function listHeader(c: Context, name: string): string[] {
  return (c.req.header(name) ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/**
 * Where a request came from. From an untrusted peer, the peer and the URL's scheme. From a
 * trusted proxy, `X-Forwarded-For` is read from the right, skipping trusted proxies, to the first
 * address none of them is (the rightmost entries are the ones a trusted proxy appended; the
 * leftmost are whatever the client claimed); `X-Forwarded-Proto`'s first value is the scheme the
 * outermost proxy saw.
 */
export function clientOrigin(c: Context, proxies: TrustedProxies): ClientOrigin {
  const direct = new URL(c.req.url).protocol === 'https:';
  const peer = peerOf(c) ?? 'unknown';
  if (!proxies.has(peer)) return { address: peer, https: direct };
  let address = peer;
  const forwarded = listHeader(c, 'x-forwarded-for');
  for (let i = forwarded.length - 1; i >= 0; i--) {
    const hop = forwarded[i] ?? '';
    if (family(hop) === undefined) break;
    address = hop;
    if (!proxies.has(hop)) break;
  }
  const proto = listHeader(c, 'x-forwarded-proto')[0]?.toLowerCase();
  return { address, https: proto === undefined ? direct : proto === 'https' };
}
