import type { JsonObject } from '../model/json.ts';
import { serviceKey, type ToolContext } from './context.ts';
import { MeshError } from './errors.ts';

/**
 * What an effect tool's handler sees of the outbound machinery (src/outbound): it describes one
 * effect (where it goes, what it carries) and how to deliver it and, when the provider can, how to
 * find it again by our key; the machinery records it before the first attempt, retries what may
 * be retried and settles a resumed call without sending twice. The vendor call runs inside
 * `deliver`, with the key.
 */

/** Our idempotency key for one effect, in the two shapes providers take. */
export interface EffectKey {
  /** sha256 hex of (run, call step, call id, effect name): stable across a resume. */
  readonly key: string;
  /** The same key as an RFC 4122 (version 4 layout) UUID, for providers that take a client id. */
  readonly uuid: string;
}

/** What the provider answered for a delivered effect. */
export interface EffectReceipt {
  /** The provider's own id for what it made (an issue id, a message ts). */
  readonly externalId: string;
  /** Where a human sees it, when the provider says. */
  readonly link?: string;
  /** What the handler needs to describe the effect again (stored; never a credential). */
  readonly data?: JsonObject;
}

/** One effect of a call, as a handler hands it over. */
export interface Effect {
  /** Distinguishes several effects of one call (`issue`, `comment`); part of the key. */
  readonly name: string;
  /** What kind of effect, for the run view: `<package>.<verb>`. */
  readonly kind: string;
  /** Where it goes, for the run view (`team ENG`, `channel #ops`): no secrets. */
  readonly target: string;
  /** What it carries, as recorded before the first attempt (no secrets). */
  readonly payload: JsonObject;
  /** One attempt. Throws {@link DeliveryError} to say what the failure means. */
  send(key: EffectKey): Promise<EffectReceipt>;
  /**
   * Finds what an earlier attempt with this key made, or undefined when it made nothing. Present
   * only when the provider can answer that (a client-supplied id, our key in its metadata): then
   * an attempt whose answer was lost is reconciled instead of reported unknown.
   */
  lookup?(key: EffectKey): Promise<EffectReceipt | undefined>;
}

/**
 * What a failed attempt means for the effect:
 * - `retryable`: the provider did not act (rate limited, briefly unavailable); try again later;
 * - `terminal`: it did not act and never will for this request (a refused credential, a bad
 *   target); the message names the fix and goes to the model;
 * - `ambiguous`: the request may have been acted on (the connection dropped, a timeout, a 500).
 */
export type DeliveryFailureKind = 'retryable' | 'terminal' | 'ambiguous';

/** A failed attempt, classified by the handler that knows its provider. Never carries a secret. */
export class DeliveryError extends MeshError {
  static readonly code = 'delivery_failed';
  constructor(
    readonly failure: DeliveryFailureKind,
    message: string,
    options?: { readonly retryAfterMs?: number; readonly cause?: unknown },
  ) {
    super(
      DeliveryError.code,
      message,
      options?.retryAfterMs === undefined
        ? { failure }
        : { failure, retry_after_ms: options.retryAfterMs },
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }

  get retryAfterMs(): number | undefined {
    const value = this.data?.['retry_after_ms'];
    return typeof value === 'number' ? value : undefined;
  }
}

/** How one effect ended, as its handler reports it to the model. */
export type Delivery =
  | {
      readonly state: 'delivered';
      readonly receipt: EffectReceipt;
      readonly attempts: number;
      /** True when this call found the effect already delivered (a resumed call). */
      readonly settledEarlier: boolean;
    }
  | { readonly state: 'failed'; readonly error: string; readonly attempts: number }
  | { readonly state: 'unknown'; readonly error: string; readonly attempts: number };

/**
 * An effect delivered during a call whose row's `delivered` transition is left for the call's end
 * to write, in the same commit as its observation (decision 0058): the receipt as it is stored.
 */
export interface DeliveredEffect {
  /** The outbound event's id. */
  readonly id: string;
  readonly externalId: string;
  readonly link: string | null;
  readonly result: JsonObject | null;
}

/** Where a call's delivered effects are collected for its end to write (the run's call loop). */
export interface EffectSettlements {
  add(effect: DeliveredEffect): void;
}

const settlements = new WeakMap<ToolContext, EffectSettlements>();

/**
 * Says that the effects `ctx`'s call delivers are settled with the call's end: the control plane
 * calls it for the context it hands a handler, never a package.
 */
export function settleWithCall(ctx: ToolContext, sink: EffectSettlements): void {
  settlements.set(ctx, sink);
}

/** Where `ctx`'s delivered effects are settled, when its call's end writes them. */
export function settlementsOf(ctx: ToolContext): EffectSettlements | undefined {
  return settlements.get(ctx);
}

/** The outbound machinery, as a handler uses it. */
export interface Outbox {
  /** Records the effect (once per key), delivers or settles it, and says how it ended. */
  deliver(ctx: ToolContext, effect: Effect): Promise<Delivery>;
}

/** The service effect tools declare as `service:mesh.outbound`. */
export const OUTBOX = serviceKey<Outbox>('mesh.outbound');

/** The need an effect tool declares to hand its effects to the outbound machinery. */
export const OUTBOX_NEED = `service:${OUTBOX.id}` as const;

/**
 * Whether a committed call of this definition may be invoked again on resume: every effect it
 * has goes through the outbound machinery, which finds the recorded effect by its key and never
 * sends one twice (it reconciles, returns the recorded outcome or reports unknown).
 */
export function settlesThroughOutbox(definition: {
  readonly class: string;
  readonly needs: readonly string[];
}): boolean {
  return definition.class === 'effect' && definition.needs.includes(OUTBOX_NEED);
}

/**
 * The observation for how an effect ended: the handler describes a delivered one; a failure's
 * message (written by the handler, naming the fix) and an unknown outcome are said the same way
 * for every package.
 */
export function deliveryOutput(
  what: string,
  delivery: Delivery,
  describe: (receipt: EffectReceipt) => { text: string; data?: JsonObject },
): { text: string; data?: JsonObject; isError?: boolean; unknownOutcome?: boolean } {
  switch (delivery.state) {
    case 'delivered': {
      const described = describe(delivery.receipt);
      return {
        text: delivery.settledEarlier
          ? `${described.text} (delivered by an earlier attempt of this call; not sent again)`
          : described.text,
        data: { ...described.data, delivery: 'delivered', attempts: delivery.attempts },
      };
    }
    case 'failed':
      return {
        text: `${what} failed after ${delivery.attempts} attempt(s): ${delivery.error}`,
        data: { delivery: 'failed', attempts: delivery.attempts },
        isError: true,
      };
    case 'unknown':
      return {
        text: `Whether ${what} happened is unknown: ${delivery.error}. Check for it before trying again.`,
        data: { delivery: 'unknown', attempts: delivery.attempts },
        unknownOutcome: true,
      };
    default: {
      const never: never = delivery;
      throw new Error(`unknown delivery ${String(never)}`);
    }
  }
}
