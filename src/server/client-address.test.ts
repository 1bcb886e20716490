import { describe, expect, it } from 'vitest';
import { parseTrustedProxies, trustedProxies } from './client-address.ts';

describe('trusted proxies', () => {
  it('holds addresses and CIDR ranges of both families', () => {
    const proxies = parseTrustedProxies('10.0.0.0/8, 192.0.2.1 ::1,fd00::/8');
    expect(proxies.has('10.200.3.4')).toBe(true);
    expect(proxies.has('::ffff:10.1.1.1')).toBe(true);
    expect(proxies.has('192.0.2.1')).toBe(true);
    expect(proxies.has('192.0.2.2')).toBe(false);
    expect(proxies.has('::1')).toBe(true);
    expect(proxies.has('fd12::1')).toBe(true);
    expect(proxies.has('unknown')).toBe(false);
    expect(parseTrustedProxies(undefined).has('127.0.0.1')).toBe(false);
  });

  it('refuses a bad entry by its position, without echoing it', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/1', '::1/129', '10.0.0.0/x']) {
      expect(() => trustedProxies(['127.0.0.1', bad])).toThrow(
        /^trusted proxy 2 is not an IP address or a CIDR range/,
      );
    }
  });
});
