import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode, type ErrorFamily } from '../tool/error-codes.ts';
import { MeshError } from '../tool/errors.ts';
import { ERROR_STATUS, httpStatusOf } from './error-status.ts';
import { errorResponse } from './http.ts';

/** One code of each family, as a caller meets it, and how it must be answered. */
const FAMILIES: Record<
  ErrorFamily,
  { code: ErrorCode; status: number; retryable: boolean; retryAfter?: string }
> = {
  invalid: { code: 'invalid_body', status: 400, retryable: false },
  unauthenticated: { code: 'unauthorized', status: 401, retryable: false },
  forbidden: { code: 'csrf_refused', status: 403, retryable: false },
  not_found: { code: 'agent_not_found', status: 404, retryable: false },
  not_supported: { code: 'method_not_allowed', status: 405, retryable: false },
  conflict: { code: 'agent_exists', status: 409, retryable: false },
  too_large: { code: 'body_too_large', status: 413, retryable: false },
  unsupported_media: { code: 'unsupported_media_type', status: 415, retryable: false },
  rate_limited: { code: 'rate_limited', status: 429, retryable: true },
  unavailable: { code: 'database_unreachable', status: 503, retryable: true, retryAfter: '5' },
  handed_over: { code: 'run_interrupted', status: 503, retryable: true, retryAfter: '10' },
  upstream: { code: 'model_call_failed', status: 502, retryable: false },
  upstream_transient: {
    code: 'mcp_transport_failed',
    status: 502,
    retryable: true,
    retryAfter: '5',
  },
  internal: { code: 'lease_lost', status: 500, retryable: false },
};

describe('how each family of error codes is answered over HTTP', () => {
  for (const [family, expected] of Object.entries(FAMILIES)) {
    it(`${family}: ${expected.status}${expected.retryable ? ', retryable' : ''}`, () => {
      expect(ERROR_CODES[expected.code]).toBe(family);
      const answer = errorResponse(
        new MeshError(expected.code, 'what went wrong', { run_id: 'r-1' }),
      );
      expect(answer.status).toBe(expected.status);
      expect(answer.headers['retry-after']).toBe(expected.retryAfter);
      if (expected.status === 500) {
        // A failure of the server itself says nothing of its cause.
        expect(answer.body.error).toEqual({
          code: 'internal_error',
          message: 'the server failed; see its log',
          retryable: false,
        });
      } else {
        expect(answer.body.error).toMatchObject({
          code: expected.code,
          message: 'what went wrong',
          retryable: expected.retryable,
        });
      }
    });
  }

  it('names the run a handed-over request goes on in, so the caller follows it', () => {
    const answer = errorResponse(
      new MeshError('run_interrupted', 'handed over', { run_id: 'r-9' }),
    );
    expect(answer.body.error.run_id).toBe('r-9');
  });

  it('gives every code a status (the two tables are complete together)', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[])
      expect(ERROR_STATUS[code], code).toBe(httpStatusOf(code));
    expect(Object.keys(ERROR_STATUS).sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('answers anything that is not a Mesh error, or a code outside the table, as an opaque 500', () => {
    for (const error of [new Error('boom: secret'), 'text', { code: 'agent_not_found' }]) {
      const answer = errorResponse(error, 'req-1');
      expect(answer.status).toBe(500);
      expect(JSON.stringify(answer.body)).not.toContain('secret');
      expect(answer.body.error.request_id).toBe('req-1');
    }
  });
});
