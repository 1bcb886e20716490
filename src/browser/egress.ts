import { lookup } from 'node:dns/promises';
import { classifyAddress, type AddressClass } from '../egress/address-policy.ts';
import type { Admit } from '../egress/egress-proxy.ts';

/** How long a name's addresses are trusted before they are looked up again. */
const CACHE_MS = 30_000;

const WHY: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address (a development grant with --allow-loopback may reach it)',
  private: 'a private address',
  link_local: 'a link-local address (cloud metadata lives there)',
  unique_local: 'a unique-local address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
  invalid: 'not an address',
};

/** How a browser session on this machine may connect: loopback only when its grant allows it. */
export interface BrowserEgressOptions {
  readonly allowLoopback: boolean;
  readonly resolve?: (host: string) => Promise<readonly string[]>;
}

/**
 * The egress rule of a browser session on this machine (the development backend), as one check of
 * a host: the addresses it may connect to, or why not. A request may go only to public addresses,
 * and to loopback when the grant allows it; private, link-local (the cloud metadata address among
 * them) and every other special range are refused. A name is resolved here, and every address it
 * resolves to must pass.
 */
function hostCheck(
  options: BrowserEgressOptions,
): (host: string) => Promise<{ addresses: readonly string[] } | { refused: string }> {
  const resolve =
    options.resolve ??
    (async (host: string) => (await lookup(host, { all: true })).map((a) => a.address));
  const cache = new Map<string, { at: number; addresses: readonly string[] }>();

  async function addressesOf(host: string): Promise<readonly string[]> {
    if (classifyAddress(host) !== 'invalid') return [host];
    const cached = cache.get(host);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.addresses;
    const addresses = await resolve(host).catch(() => []);
    cache.set(host, { at: Date.now(), addresses });
    return addresses;
  }

  return async (raw) => {
    const host = raw.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const addresses = await addressesOf(host);
    if (addresses.length === 0) return { refused: `${host} resolved to no address` };
    for (const address of addresses) {
      const kind = classifyAddress(address);
      if (kind === 'public' || (kind === 'loopback' && options.allowLoopback)) continue;
      const who = host === address ? host : `${host} (${address})`;
      return { refused: `${who} is ${WHY[kind]}` };
    }
    return { addresses };
  };
}

/**
 * The rule as a check of a URL, for the driver's own requests and navigations: it names what is
 * refused before the browser tries. The browser's connections themselves pass the egress proxy
 * ({@link browserEgressAdmission}), which holds every hop.
 */
export function browserEgressGuard(
  options: BrowserEgressOptions,
): (url: URL) => Promise<string | undefined> {
  const check = hostCheck(options);
  return async (url) => {
    if (
      url.protocol !== 'http:' &&
      url.protocol !== 'https:' &&
      url.protocol !== 'ws:' &&
      url.protocol !== 'wss:'
    )
      return `${url.protocol} URLs are not fetched`;
    const verdict = await check(url.hostname);
    return 'refused' in verdict ? verdict.refused : undefined;
  };
}

/**
 * The rule as the egress proxy's admission: the development Chromium is launched with the proxy
 * as its only way out (loopback included), so every connection it opens, on every redirect hop,
 * subresource, window or WebSocket, is checked here after the name is resolved, and made to the
 * address that was checked.
 */
export function browserEgressAdmission(options: BrowserEgressOptions): Admit {
  const check = hostCheck(options);
  return async (host) => {
    const verdict = await check(host);
    if ('refused' in verdict) return { refused: `egress refused: ${verdict.refused}` };
    const [address] = verdict.addresses;
    return address === undefined ? { refused: `${host} resolved to no address` } : { address };
  };
}
