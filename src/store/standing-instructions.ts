import type { JsonValue } from '../model/json.ts';
import type { Queryable } from './db.ts';

/** What an operator told the deployment to do on its own: the value, who said so and when. */
export interface StandingInstruction {
  readonly name: string;
  readonly value: JsonValue;
  readonly setBy: string;
  readonly setAt: Date;
}

const COLUMNS = `name, value, set_by as "setBy", set_at as "setAt"`;

/** The instruction under `name`, or undefined when no operator gave one. */
export async function findStandingInstruction(
  q: Queryable,
  name: string,
): Promise<StandingInstruction | undefined> {
  const { rows } = await q.query<StandingInstruction>(
    `select ${COLUMNS} from standing_instructions where name = $1`,
    [name],
  );
  return rows[0];
}

/** Gives (or replaces) the instruction under `name`, attributed to `setBy`. */
export async function setStandingInstruction(
  q: Queryable,
  name: string,
  value: JsonValue,
  setBy: string,
): Promise<StandingInstruction> {
  const { rows } = await q.query<StandingInstruction>(
    `insert into standing_instructions (name, value, set_by, set_at) values ($1, $2::jsonb, $3, now())
     on conflict (name) do update set value = excluded.value, set_by = excluded.set_by, set_at = now()
     returning ${COLUMNS}`,
    [name, JSON.stringify(value), setBy],
  );
  return rows[0] as StandingInstruction;
}
