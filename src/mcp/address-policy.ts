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

interface Cidr {
  readonly base: bigint;
  readonly bits: number;
  readonly width: 32 | 128;
}

function parseV4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseV6(input: string): bigint | undefined {
  let text = input.replace(/%.*$/, ''); // a zone id does not change the class
  const lastColon = text.lastIndexOf(':');
  if (lastColon === -1) return undefined;
  if (text.includes('.', lastColon)) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = halves.map((half) => (half === '' ? [] : half.split(':')));
  const head = groups[0] ?? [];
  const tail = groups[1] ?? [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let value = 0n;
  for (const group of [...head, ...Array<string>(missing).fill('0'), ...tail]) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return undefined;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  return value;
}

function parseCidr(text: string): Cidr {
  const [address = '', bits = ''] = text.split('/');
  const v4 = parseV4(address);
  const base = v4 ?? parseV6(address);
  if (base === undefined) throw new Error(`bad range ${text}`);
  return { base, bits: Number(bits), width: v4 === undefined ? 128 : 32 };
}

function contains(range: Cidr, value: bigint): boolean {
  const shift = BigInt(range.width - range.bits);
  return value >> shift === range.base >> shift;
}

const V4_TABLE = V4_RANGES.map(([cidr, kind]) => ({ range: parseCidr(cidr), kind }));
const V6_TABLE = V6_RANGES.map(([cidr, kind]) => ({ range: parseCidr(cidr), kind }));
const MAPPED = parseCidr('::ffff:0:0/96');
const NAT64 = parseCidr('64:ff9b::/96');
const SIX_TO_FOUR = parseCidr('2002::/16');
const GLOBAL_UNICAST = parseCidr('2000::/3');

function classifyV4(value: bigint): AddressClass {
  return V4_TABLE.find((entry) => contains(entry.range, value))?.kind ?? 'public';
}

/**
 * A translated address reaches the IPv4 address it embeds through a gateway, not this host, so an
 * embedded loopback must not pass as loopback (which the development setting would allow).
 */
function classifyEmbedded(v4: bigint): AddressClass {
  const kind = classifyV4(v4);
  return kind === 'loopback' ? 'reserved' : kind;
}

function classifyV6(value: bigint): AddressClass {
  if (contains(MAPPED, value)) return classifyV4(value & 0xffffffffn);
  if (contains(NAT64, value)) return classifyEmbedded(value & 0xffffffffn);
  if (contains(SIX_TO_FOUR, value)) return classifyEmbedded((value >> 80n) & 0xffffffffn);
  const listed = V6_TABLE.find((entry) => contains(entry.range, value))?.kind;
  if (listed !== undefined) return listed;
  return contains(GLOBAL_UNICAST, value) ? 'public' : 'reserved';
}

/** Classifies an IPv4 or IPv6 address (brackets and a zone id are accepted). */
export function classifyAddress(ip: string): AddressClass {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const v4 = parseV4(text);
  if (v4 !== undefined) return classifyV4(v4);
  const v6 = parseV6(text);
  return v6 === undefined ? 'invalid' : classifyV6(v6);
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
