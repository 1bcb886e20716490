import { describe, expect, it } from 'vitest';
import { maskedUrl } from './masked-url.ts';

describe('a page URL as Mesh shows it', () => {
  it('masks credential-named query values and a userinfo password, and leaves the rest', () => {
    expect(maskedUrl('https://acme.test/a?user=ada&Password=hunter2&q=x')).toBe(
      'https://acme.test/a?user=ada&Password=****&q=x',
    );
    expect(maskedUrl('https://acme.test/cb?code=1&access_token=t0k&API_KEY=k&sig=s')).toBe(
      'https://acme.test/cb?code=1&access_token=****&API_KEY=****&sig=****',
    );
    expect(maskedUrl('https://ada:hunter2@acme.test/')).toBe('https://ada:****@acme.test/');
    expect(maskedUrl('https://acme.test/?token=&q=1')).toBe('https://acme.test/?token=&q=1');
    expect(maskedUrl('https://acme.test/plain?q=login+bug')).toBe(
      'https://acme.test/plain?q=login+bug',
    );
    expect(maskedUrl('not a url')).toBe('not a url');
  });
});
