import { describe, expect, it } from 'vitest';
import { hasCode } from '../tool/errors.ts';
import {
  checkAddresses,
  checkUrl,
  classifyAddress,
  EgressRefusedError,
  type AddressClass,
} from './address-policy.ts';

function refusal(run: () => unknown): EgressRefusedError {
  try {
    run();
  } catch (error) {
    expect(hasCode(error, EgressRefusedError.code)).toBe(true);
    return error as EgressRefusedError;
  }
  throw new Error('expected a refusal');
}

describe('classifyAddress', () => {
  const table: readonly (readonly [string, AddressClass])[] = [
    // IPv4
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['1.1.1.1', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['100.128.0.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['169.254.0.1', 'link_local'],
    ['172.15.255.255', 'public'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv6
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf:ffff::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456:789a::1', 'unique_local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001::1', 'reserved'], // Teredo
    ['100::1', 'reserved'],
    ['::10.0.0.1', 'reserved'], // deprecated IPv4-compatible form
    ['4000::1', 'reserved'], // outside global unicast
    // IPv4-mapped: classified as the IPv4 address
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:8.8.8.8', 'public'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
    // NAT64 well-known prefix
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b::127.0.0.1', 'reserved'], // a gateway's loopback, not ours
    ['64:ff9b:1::1', 'private'], // local-use NAT64
    // 6to4
    ['2002:0a00:0001::1', 'private'],
    ['2002:a9fe:a9fe::', 'link_local'],
    ['2002:c0a8:0101:1::1', 'private'],
    ['2002:0808:0808::1', 'public'],
    ['2002:7f00:1::', 'reserved'],
    // not addresses
    ['example.com', 'invalid'],
    ['', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['010.0.0.1', 'invalid'],
    ['1.2.3', 'invalid'],
    ['1::2::3', 'invalid'],
    ['1:2:3:4:5:6:7:8:9', 'invalid'],
    ['12345::1', 'invalid'],
    ['::ffff:300.0.0.1', 'invalid'],
  ];

  it.each(table)('%s is %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected);
  });
});

describe('checkUrl', () => {
  it('accepts https and returns the host to resolve', () => {
    expect(checkUrl(new URL('https://mcp.example.com/mcp?x=1'))).toEqual({
      hostname: 'mcp.example.com',
      ipLiteral: false,
      plainHttp: false,
      display: 'https://mcp.example.com/',
    });
    expect(checkUrl(new URL('https://[::1]:8443/')).hostname).toBe('::1');
    expect(checkUrl(new URL('https://[::1]:8443/')).ipLiteral).toBe(true);
  });

  it('refuses plain http unless the development setting is on', () => {
    const error = refusal(() => checkUrl(new URL('http://example.com/path?token=canary-1')));
    expect(error.message).toBe(
      'refused http://example.com/: plain http is allowed only to loopback with the development setting on',
    );
    expect(error.data).toEqual({ target: 'http://example.com/', category: 'plain_http' });
    expect(checkUrl(new URL('http://localhost:3000/'), { allowLoopbackHttp: true }).plainHttp).toBe(
      true,
    );
  });

  it('refuses other schemes without showing the path', () => {
    for (const url of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'data:text/plain,hello',
      'ws://a/',
    ]) {
      const error = refusal(() => checkUrl(new URL(url), { allowLoopbackHttp: true }));
      expect(error.message).toMatch(/scheme [a-z]+: is not allowed \(https only\)$/);
      expect(error.message).not.toContain('passwd');
      expect(error.message).not.toContain('hello');
    }
  });

  it('refuses credentials in the URL without showing them', () => {
    const error = refusal(() => checkUrl(new URL('https://user:canary-2@example.com/')));
    expect(error.message).toBe(
      'refused https://example.com/: credentials in the URL are not allowed',
    );
    expect(error.message).not.toContain('canary-2');
    expect(error.message).not.toContain('user');
    refusal(() => checkUrl(new URL('https://token@example.com/')));
  });
});

describe('checkAddresses', () => {
  const named = checkUrl(new URL('https://mcp.example.com/'));
  const plain = checkUrl(new URL('http://mcp.test:8080/'), { allowLoopbackHttp: true });

  it('accepts an answer of public addresses', () => {
    expect(() => checkAddresses(named, ['93.184.216.34', '2606:4700::1'])).not.toThrow();
  });

  it('refuses the whole answer when any address is not public, naming host and address', () => {
    const error = refusal(() => checkAddresses(named, ['93.184.216.34', '10.0.0.5']));
    expect(error.message).toBe('refused mcp.example.com (10.0.0.5): private address');
    const metadata = refusal(() => checkAddresses(named, ['169.254.169.254']));
    expect(metadata.message).toBe('refused mcp.example.com (169.254.169.254): link-local address');
    refusal(() => checkAddresses(named, []));
  });

  it('names an IP literal once', () => {
    const literal = checkUrl(new URL('https://169.254.169.254/latest/meta-data?x=1'));
    const error = refusal(() => checkAddresses(literal, [literal.hostname]));
    expect(error.message).toBe('refused 169.254.169.254: link-local address');
  });

  it('allows loopback only with the development setting, and plain http only to loopback', () => {
    refusal(() => checkAddresses(named, ['127.0.0.1']));
    expect(() =>
      checkAddresses(named, ['127.0.0.1', '::1'], { allowLoopbackHttp: true }),
    ).not.toThrow();
    expect(() => checkAddresses(plain, ['127.0.0.1'], { allowLoopbackHttp: true })).not.toThrow();
    const error = refusal(() =>
      checkAddresses(plain, ['127.0.0.1', '93.184.216.34'], { allowLoopbackHttp: true }),
    );
    expect(error.message).toBe(
      'refused http://mcp.test:8080/: plain http is allowed only to loopback with the development setting on',
    );
    const privateHop = refusal(() =>
      checkAddresses(plain, ['10.0.0.5'], { allowLoopbackHttp: true }),
    );
    expect(privateHop.message).toBe('refused mcp.test (10.0.0.5): private address');
  });
});
