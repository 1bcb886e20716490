import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../tool/errors.ts';
import { ModelCallError, redactCredentials } from './errors.ts';

describe('redactCredentials', () => {
  it('removes the key verbatim, URL-encoded and JSON-escaped', () => {
    const key = 'k3y/with+odd"chars';
    const text = `a ${key} b ${encodeURIComponent(key)} c ${JSON.stringify(key)}`;
    const out = redactCredentials(text, [key]);
    expect(out).not.toContain(key);
    expect(out).not.toContain(encodeURIComponent(key));
    expect(out).not.toContain('k3y');
  });

  it('removes bearer tokens and sk- shaped keys, masked ones included, and keeps the rest', () => {
    const out = redactCredentials(
      'Authorization: Bearer abc.def-ghi; Incorrect API key provided: sk-proj-ab12****wxyz.',
      [],
    );
    expect(out).toBe('Authorization: Bearer [redacted]; Incorrect API key provided: [redacted]');
  });

  it('leaves no trace of any realistic key in any surrounding text', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/),
        fc.string(),
        (before, key, after) => {
          expect(redactCredentials(`${before}${key}${after}`, [key])).not.toContain(key);
        },
      ),
    );
  });
});

describe('ModelCallError', () => {
  it('carries the failure, matches by code and serializes as {code, message, data}', () => {
    const failure = {
      code: 'rate_limited',
      message: 'slow down',
      status: 429,
      retryable: true,
    } as const;
    const error = new ModelCallError(failure, 3);
    expect(hasCode(error, 'model_call_failed')).toBe(true);
    expect(error.failure).toBe(failure);
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      code: 'model_call_failed',
      message: 'slow down',
      data: { failure, attempts: 3 },
    });
  });
});
