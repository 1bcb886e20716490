import type { ModelRequest, ModelResponse } from './wire.ts';

/**
 * The one seam between the turn engine and a model provider. Implementations live at the edge
 * (src/providers); the engine never names a vendor.
 */
export interface ModelClient {
  /** A short, stable label for logs and steps (e.g. `openai_compatible`, `scripted`). */
  readonly kind: string;
  complete(
    request: ModelRequest,
    options: { readonly signal: AbortSignal },
  ): Promise<ModelResponse>;
}

/**
 * Why a model call failed, as a value the engine can persist. `message` is the provider's own
 * message with every credential removed; `retryable` says whether the same request may succeed
 * later (429, 5xx, a dropped connection).
 */
export interface ModelFailure {
  readonly code:
    | 'rate_limited'
    | 'server_error'
    | 'connection'
    | 'timeout'
    | 'bad_request'
    | 'auth'
    | 'invalid_response';
  readonly message: string;
  readonly status?: number;
  readonly retryable: boolean;
}
