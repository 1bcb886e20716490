import { lookup } from 'node:dns/promises';
import { classifyAddress, type AddressClass } from '../egress/address-policy.ts';

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

/**
 * The egress rule of a browser session on this machine (the development backend): a request may
 * go only to public addresses, and to loopback when the grant allows it; private, link-local (the
 * cloud metadata address among them) and every other special range are refused. Names are
 * resolved here and every address they resolve to must pass. Chromium resolves the name again
 * when it connects, so a name that changes its answer in between is not caught: the development
 * backend is not a production perimeter (a vendor's browser runs outside ours).
 */
export function browserEgressGuard(options: {
  readonly allowLoopback: boolean;
  readonly resolve?: (host: string) => Promise<readonly string[]>;
}): (url: URL) => Promise<string | undefined> {
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

  return async (url) => {
    if (
      url.protocol !== 'http:' &&
      url.protocol !== 'https:' &&
      url.protocol !== 'ws:' &&
      url.protocol !== 'wss:'
    )
      return `${url.protocol} URLs are not fetched`;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const addresses = await addressesOf(host);
    if (addresses.length === 0) return `${host} resolved to no address`;
    for (const address of addresses) {
      const kind = classifyAddress(address);
      if (kind === 'public' || (kind === 'loopback' && options.allowLoopback)) continue;
      const who = host === address ? host : `${host} (${address})`;
      return `${who} is ${WHY[kind]}`;
    }
    return undefined;
  };
}
