import { MeshError } from '../../tool/errors.ts';
import type { Caller } from './operation.ts';

/** Who a call acts as: the credential's actor, or the one a relaying credential names. */
export interface Acting {
  readonly actor: string;
  /** The credential's actor, when it posts for another (recorded next to the named actor). */
  readonly relayedBy?: string;
}

/**
 * The acting identity of a call that may name an actor (`field`): the credential's own, unless
 * the call names another and the credential may relay (a relay token, the machine's CLI). Any
 * other credential naming someone else is refused (`relay_not_allowed`, 403), naming the field.
 */
export function actingAs(caller: Caller, named: string | undefined, field: string): Acting {
  if (named === undefined || named === caller.actor) return { actor: caller.actor };
  if (!caller.relay)
    throw new MeshError(
      'relay_not_allowed',
      `\`${field}\` names who acts, which only a relay token may do (mesh tokens create --relay on): ` +
        'this token acts as its holder; leave the field out',
      { field },
    );
  return { actor: named, relayedBy: caller.actor };
}
