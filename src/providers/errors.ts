import type { ModelFailure } from '../model/client.ts';
import type { JsonObject } from '../model/json.ts';
import { MeshError } from '../tool/errors.ts';
import { createRedactor, REDACTED } from '../tool/redaction.ts';

/**
 * A model call failed for good: the provider refused it, or every permitted attempt failed.
 * Match it with `hasCode(error, 'model_call_failed')`. `message` is the provider's own message
 * with every credential removed; `failure` is the value the engine persists.
 */
export class ModelCallError extends MeshError {
  static readonly code = 'model_call_failed';
  readonly failure: ModelFailure;

  /** `attempts` counts the HTTP requests made for this call (0 when refused before sending). */
  constructor(failure: ModelFailure, attempts: number) {
    super(ModelCallError.code, failure.message, {
      failure: failureJson(failure),
      attempts,
    });
    this.failure = failure;
  }
}

function failureJson(failure: ModelFailure): JsonObject {
  const { code, message, status, retryable } = failure;
  return status === undefined ? { code, message, retryable } : { code, message, status, retryable };
}

/** `Authorization: Bearer <token>` as it appears when a server echoes a request back. */
const BEARER_TOKEN = /\b(bearer)\s+[^\s"'`,;]+/gi;
/**
 * OpenAI-style keys (`sk-…`, `sk-proj-…`, `sk-or-v1-…`), including the masked form OpenAI puts in
 * its 401 message (`sk-abc1****wxyz`), which still leaks both ends of the key.
 */
const KEY_SHAPED = /\bsk-[A-Za-z0-9_\-*.]{4,}/g;

/**
 * Removes each secret in every form it may come back in (see src/tool/redaction.ts: verbatim,
 * escaped, URL-encoded, hex, base64, masked) and anything shaped like a bearer token or API key
 * from `text`. Every string a provider sends back passes through here before it reaches a
 * message, a log or a persisted step: servers do echo keys in their error bodies.
 */
export function redactCredentials(text: string, secrets: readonly string[]): string {
  return createRedactor(secrets)
    .text(text)
    .replace(BEARER_TOKEN, `$1 ${REDACTED}`)
    .replace(KEY_SHAPED, REDACTED);
}
