import type { RunRecord } from '../../run/records.ts';
import { findRunsByPrefix } from '../../store/run-reads.ts';
import { MeshError } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';
import { InvalidInputError } from '../operations/input.ts';

/** The fewest characters of a run id that name it: what listings show, and what is accepted. */
export const SHORT_RUN_ID = 8;

const UUID_LAYOUT = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';

/** A run id as listings show it: its first {@link SHORT_RUN_ID} characters. */
export function shortRunId(id: string): string {
  return id.slice(0, SHORT_RUN_ID);
}

/** Whether `ref` is the start of a run id as ids are written (lowercase hex, dashes in place). */
function isIdPrefix(ref: string): boolean {
  if (ref.length > UUID_LAYOUT.length) return false;
  for (let i = 0; i < ref.length; i++) {
    const c = ref[i] ?? '';
    if (UUID_LAYOUT[i] === '-' ? c !== '-' : !/[0-9a-f]/.test(c)) return false;
  }
  return true;
}

/** How many candidates an ambiguous prefix lists. */
const CANDIDATES = 5;

/**
 * The run a reference names: its whole id, or any prefix of at least {@link SHORT_RUN_ID}
 * characters that only one run's id starts with. An ambiguous prefix is refused listing the runs
 * it matches, so the caller can pick; `field` names where the reference came from.
 */
export async function resolveRun(mesh: Mesh, ref: string, field = 'run'): Promise<RunRecord> {
  const id = ref.toLowerCase();
  if (!isIdPrefix(id) || id.length < SHORT_RUN_ID) {
    throw new InvalidInputError(
      `\`${field}\` must be a run id, or its first ${SHORT_RUN_ID} or more characters`,
      field,
    );
  }
  if (id.length === UUID_LAYOUT.length) {
    const run = await mesh.ledger.run(id);
    if (!run) throw new MeshError('run_not_found', 'no run with that id');
    return run;
  }
  const found = await findRunsByPrefix(mesh.db, id, CANDIDATES + 1);
  const [only] = found;
  if (!only) throw new MeshError('run_not_found', `no run id starts with ${id}`);
  if (found.length === 1) return only;
  const listed = found
    .slice(0, CANDIDATES)
    .map((r) => `${r.id} (${r.status}, ${r.createdAt.toISOString()})`);
  throw new MeshError(
    'run_id_ambiguous',
    `${found.length > CANDIDATES ? 'more than ' : ''}${Math.min(found.length, CANDIDATES)} runs have ids starting with ${id}: ${listed.join(', ')}; give more of the id`,
    { field, candidates: found.slice(0, CANDIDATES).map((r) => r.id) },
  );
}
