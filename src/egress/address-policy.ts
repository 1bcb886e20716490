import { BlockList, isIP } from 'node:net';
import type { JsonObject } from '../model/json.ts';
import { MeshError } from '../tool/errors.ts';

/**
 * Which part of the address space an IP address is in. Only `public` may be reached; `loopback`
 * only with the development setting on; everything else is refused. `invalid` is a string that is
 * not an IP address at all.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'unique_local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'invalid';

/** An outbound request Mesh refused; the message names the host and why, never a query or secret. */
export class EgressRefusedError extends MeshError {
  static readonly code = 'egress_refused';
  constructor(target: string, reason: string, category: string) {
    const data: JsonObject = { target, category };
    super(EgressRefusedError.code, `refused ${target}: ${reason}`, data);
  }
}

export interface EgressOptions {
  /** Development only: allow loopback addresses, and plain http to them. */
  readonly allowLoopbackHttp?: boolean;
}

/** A URL that passed the scheme and credential checks; its addresses are still to be checked. */
export interface UrlTarget {
  /** The host without IPv6 brackets: a name to resolve, or an IP literal. */
  readonly hostname: string;
  readonly ipLiteral: boolean;
  readonly plainHttp: boolean;
  /** Scheme, host and port only: what a refusal may show. */
  readonly display: string;
}

const PLAIN_HTTP = 'plain http is allowed only to loopback with the development setting on';

const LABELS: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'loopback address (allowed only with the development setting on)',
  private: 'private address',
  link_local: 'link-local address',
  unique_local: 'unique-local address',
  unspecified: 'unspecified address',
  multicast: 'multicast address',
  broadcast: 'broadcast address',
  reserved: 'reserved address',
  invalid: 'not an IP address',
};

// IANA special-purpose ranges. First match wins, so narrower ranges come before wider ones.
const V4_RANGES: readonly (readonly [string, AddressClass])[] = [
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'private'], // carrier-grade NAT
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link_local'], // includes the cloud metadata address 169.254.169.254
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.2.0/24', 'reserved'], // documentation
  ['192.88.99.0/24', 'reserved'], // 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'], // benchmarking
  ['198.51.100.0/24', 'reserved'], // documentation
  ['203.0.113.0/24', 'reserved'], // documentation
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
];

// IPv4-mapped, NAT64 and 6to4 addresses are classified by the IPv4 address they carry (see below).
const V6_RANGES: readonly (readonly [string, AddressClass])[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'], // local-use NAT64
  ['::/8', 'reserved'], // IPv4-compatible and other deprecated forms
  ['100::/64', 'reserved'], // discard-only
  ['2001:db8::/32', 'reserved'], // documentation
  ['2001::/23', 'reserved'], // IETF protocol assignments, Teredo included
  ['3fff::/20', 'reserved'], // documentation
  ['fc00::/7', 'unique_local'],
  ['fe80::/10', 'link_local'],
  ['fec0::/10', 'reserved'], // deprecated site-local
  ['ff00::/8', 'multicast'],
];

type Family = 'ipv4' | 'ipv6';

/** One range of a table as a `net.BlockList`, so node does the address arithmetic. */
function rangeList(cidr: string, family: Family): BlockList {
  const [network = '', bits = ''] = cidr.split('/');
  const list = new BlockList();
  list.addSubnet(network, Number(bits), family);
  return list;
}

function table(ranges: readonly (readonly [string, AddressClass])[], family: Family) {
  return ranges.map(([cidr, kind]) => ({ list: rangeList(cidr, family), kind }));
}

const V4_TABLE = table(V4_RANGES, 'ipv4');
const V6_TABLE = table(V6_RANGES, 'ipv6');
const MAPPED = rangeList('::ffff:0:0/96', 'ipv6');
const NAT64 = rangeList('64:ff9b::/96', 'ipv6');
const SIX_TO_FOUR = rangeList('2002::/16', 'ipv6');
const GLOBAL_UNICAST = rangeList('2000::/3', 'ipv6');

/**
 * Classifies by the IPv4 table. `family` is ipv6 for an IPv4-mapped address, which a BlockList
 * checks against its IPv4 ranges as the address it carries.
 */
function classifyV4(address: string, family: Family = 'ipv4'): AddressClass {
  return V4_TABLE.find((entry) => entry.list.check(address, family))?.kind ?? 'public';
}

/**
 * The IPv4 address carried in two 16-bit groups of an IPv6 address (`group` is the first one's
 * index). The WHATWG URL parser writes the address canonically: lowercase hex, any dotted IPv4
 * tail in hex, one `::` for the longest run of zeros.
 */
function embeddedV4(v6: string, group: number): string {
  const canonical = new URL(`http://[${v6}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  const [high = 0, low = 0] = [...left, ...zeros, ...right]
    .slice(group, group + 2)
    .map((g) => parseInt(g, 16));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * A translated address reaches the IPv4 address it embeds through a gateway, not this host, so an
 * embedded loopback must not pass as loopback (which the development setting would allow).
 */
function classifyEmbedded(v4: string): AddressClass {
  const kind = classifyV4(v4);
  return kind === 'loopback' ? 'reserved' : kind;
}

function classifyV6(address: string): AddressClass {
  if (MAPPED.check(address, 'ipv6')) return classifyV4(address, 'ipv6');
  if (NAT64.check(address, 'ipv6')) return classifyEmbedded(embeddedV4(address, 6));
  if (SIX_TO_FOUR.check(address, 'ipv6')) return classifyEmbedded(embeddedV4(address, 1));
  const listed = V6_TABLE.find((entry) => entry.list.check(address, 'ipv6'))?.kind;
  if (listed !== undefined) return listed;
  return GLOBAL_UNICAST.check(address, 'ipv6') ? 'public' : 'reserved';
}

/** Classifies an IPv4 or IPv6 address (brackets and a zone id are accepted). */
export function classifyAddress(ip: string): AddressClass {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  switch (isIP(bare)) {
    case 4:
      return classifyV4(bare);
    case 6:
      return classifyV6(bare.replace(/%.*$/, '')); // a zone id does not change the class
    default:
      return 'invalid';
  }
}

/** True when `host` is an IP literal rather than a name to resolve. */
export function isIpLiteral(host: string): boolean {
  return classifyAddress(host) !== 'invalid';
}

function displayUrl(url: URL): string {
  return url.host === '' ? `${url.protocol} URL` : `${url.protocol}//${url.host}/`;
}

/**
 * The checks that need no DNS: https only (plain http only with the development setting, and then
 * only to loopback, which {@link checkAddresses} enforces), and no credentials in the URL.
 */
export function checkUrl(url: URL, options: EgressOptions = {}): UrlTarget {
  const display = displayUrl(url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new EgressRefusedError(
      display,
      `scheme ${url.protocol} is not allowed (https only)`,
      'scheme',
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new EgressRefusedError(display, 'credentials in the URL are not allowed', 'credentials');
  }
  const plainHttp = url.protocol === 'http:';
  if (plainHttp && options.allowLoopbackHttp !== true) {
    throw new EgressRefusedError(display, PLAIN_HTTP, 'plain_http');
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (hostname === '') throw new EgressRefusedError(display, 'the URL has no host', 'no_host');
  return { hostname, ipLiteral: isIpLiteral(hostname), plainHttp, display };
}

/**
 * Refuses unless every address the target resolved to may be reached: one disallowed address in
 * an answer refuses the whole answer, since the connection could land on any of them.
 */
export function checkAddresses(
  target: UrlTarget,
  addresses: readonly string[],
  options: EgressOptions = {},
): void {
  if (addresses.length === 0) {
    throw new EgressRefusedError(target.hostname, 'the name resolved to no address', 'no_address');
  }
  for (const address of addresses) {
    const kind = classifyAddress(address);
    const loopbackAllowed = kind === 'loopback' && options.allowLoopbackHttp === true;
    if (kind !== 'public' && !loopbackAllowed) {
      const who = target.ipLiteral ? target.hostname : `${target.hostname} (${address})`;
      throw new EgressRefusedError(who, LABELS[kind], kind);
    }
    if (target.plainHttp && kind !== 'loopback') {
      throw new EgressRefusedError(target.display, PLAIN_HTTP, 'plain_http');
    }
  }
}

/**
 * The egress checks a URL can be held to when it is registered, before any DNS: its scheme and
 * credentials, and an address literal outside the public space (private, link-local, metadata,
 * reserved; loopback only with the development setting). A name is checked on every connection.
 */
export function checkUrlAtRegistration(url: URL, options: EgressOptions = {}): void {
  const target = checkUrl(url, options);
  if (target.ipLiteral) checkAddresses(target, [target.hostname], options);
}
