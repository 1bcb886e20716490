import type { Mesh } from '../../app/mesh.ts';
import type { OperatorTokenRecord } from '../../app/records.ts';
import { HttpError } from '../http-error.ts';
import type { StreamSlots } from '../run-events.ts';
import { apiRoute, type ApiRoute } from '../router.ts';

/** What every API handler runs with: the Mesh and the operator whose token was presented. */
export interface ApiContext {
  readonly mesh: Mesh;
  readonly operator: OperatorTokenRecord;
  /** Who the call acts as, for message actors and audit records ({@link actorOf} of a token). */
  readonly actor: string;
  readonly version: string;
  /** This server's origin as the request reached it; none on the CLI's socket (no browser). */
  readonly origin: string | undefined;
  /** The live event streams this server holds open. */
  readonly streams: StreamSlots;
  /** The request's `Last-Event-ID` header (a reconnecting event stream sends it). */
  readonly lastEventId: string | undefined;
  /** The request's `Prefer` header (RFC 7240), e.g. `wait=30`. */
  readonly prefer: string | undefined;
}

/** A route of the operator API. */
export type Route = ApiRoute<ApiContext>;

/** Declares an operator API route, its handler's body typed from its body schema. */
export const route = apiRoute<ApiContext>();

/** An agent, provider or package name as the API accepts it. */
export const NAME = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' } as const;
/** A secret value: write-only, at most 64 KiB. */
export const SECRET_VALUE = { type: 'string', minLength: 1, maxLength: 65536 } as const;

/** The `limit` query parameter of the listing routes. */
export const LIMIT = {
  limit: {
    description: 'How many to return (1-200, default 50).',
    schema: { type: 'integer', minimum: 1, maximum: 200 },
  },
};

/** The `limit` a listing was asked for (50 unless given). */
export function limitOf(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) return 50;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 200)
    throw new HttpError(
      'invalid_query',
      'limit must be an integer from 1 to 200',
      {},
      {
        field: 'query.limit',
      },
    );
  return n;
}

/** The operator an API call acts as, for message actors and audit. */
export function actorOf(operator: OperatorTokenRecord): string {
  return `operator:${operator.label}:${operator.id.slice(0, 8)}`;
}
