import type { ModelRequest, ModelResponse } from './wire.ts';

/**
 * The one seam between the turn engine and a model provider. Implementations live at the edge
 * (src/providers); the engine never names a vendor.
 */
export interface ModelClient {
  /** A short, stable label for logs and steps (e.g. `openai_compatible`, `scripted`). */
  readonly kind: string;
  complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse>;
}

/** How one completion is made. */
export interface CompleteOptions {
  readonly signal: AbortSignal;
  /**
   * Asks for the reply's text as the model writes it: called with the text so far of the
   * current attempt (a retry starts again from ''). The resolved response stays the one result;
   * a client that cannot stream never calls it.
   */
  readonly onText?: (text: string, attempt: number) => void;
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
