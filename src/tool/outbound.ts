import type { JsonObject } from '../model/json.ts';
import { serviceKey, type ToolContext } from './context.ts';
import { MeshError } from './errors.ts';
import { idempotencyKey, type EffectKey } from './idempotency.ts';

/**
 * What an effect tool's handler sees of the outbound machinery (src/outbound): it describes one
 * effect (where it goes, what it carries) and how to deliver it and, when the provider can, how to
 * find it again by our key; the machinery records it before the first attempt, retries what may
 * be retried and settles a resumed call without sending twice. The vendor call runs inside
 * `deliver`, with the key.
 */

export type { EffectKey } from './idempotency.ts';

/**
 * Our idempotency key for one effect: sha256 of (run, call step, call id, effect name). The step
 * makes a model's reused call id (`call_0` in every round) a different effect; the name tells
 * several effects of one call apart.
 */
export function effectKey(runId: string, step: number, callId: string, name: string): EffectKey {
  return idempotencyKey(['mesh.outbound.v1', runId, step, callId, name]);
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

/**
 * What the control plane knows of one call's effects while it runs (a run's call loop): which
 * were recorded and begun with the call's stamp, and where the call's deliveries are collected
 * for its end to write.
 */
export interface CallEffects {
  /**
   * The call's effects recorded `delivering` (attempts 1) by its stamp's commit: event id by
   * idempotency key. Their first attempt is begun; the send waits on no other commit.
   */
  readonly begunWithStamp: ReadonlyMap<string, string>;
  /** Takes a delivery whose `delivered` mark the call's end writes. */
  delivered(effect: DeliveredEffect): void;
}

const callEffects = new WeakMap<ToolContext, CallEffects>();

/**
 * Ties `effects` to the context handed to one call's handler: the control plane calls it for the
 * context it builds, never a package (which can neither reach nor forge the tie).
 */
export function withCallEffects(ctx: ToolContext, effects: CallEffects): void {
  callEffects.set(ctx, effects);
}

/** What the control plane knows of `ctx`'s call's effects, when it runs in a run's call loop. */
export function callEffectsOf(ctx: ToolContext): CallEffects | undefined {
  return callEffects.get(ctx);
}

/**
 * The one effect a call of a tool hands the outbound machinery, known from its arguments before
 * it runs (a remote MCP call: the call itself). The round's stamp commit records it begun, so
 * the call's send needs no commit of its own; the handler delivers exactly this effect.
 */
export type DeclaredEffect = Pick<Effect, 'name' | 'kind' | 'target' | 'payload'> & {
  readonly reconciles: boolean;
};

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
