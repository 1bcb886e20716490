/**
 * Who a conversation is with: one person (`direct`) or a shared space (`shared`). Policy reads it
 * to decide which packages and remote tools a turn may offer.
 */
export type Audience = 'direct' | 'shared';

/** Every audience, in the order forms and listings show them. */
export const AUDIENCES: readonly Audience[] = Object.freeze(['direct', 'shared']);
