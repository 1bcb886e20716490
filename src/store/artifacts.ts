import type { ArtifactRecord, NewArtifact } from '../run/records.ts';
import type { Queryable } from './db.ts';

/** The bytes a run keeps beside its steps: whole large outputs, and what a call returned. */

/** Inserts an artifact of a run (of one of its steps, or of the run itself). */
export async function insertArtifact(
  q: Queryable,
  artifact: NewArtifact & { readonly runId: string; readonly stepSeq: number | null },
): Promise<void> {
  await q.query(
    `insert into artifacts (id, run_id, step_seq, media_type, size_bytes, sha256, content) values ($1, $2, $3, $4, $5, $6, $7)`,
    [
      artifact.id,
      artifact.runId,
      artifact.stepSeq,
      artifact.mediaType,
      artifact.content.byteLength,
      artifact.sha256,
      artifact.content,
    ],
  );
}

export async function getArtifact(q: Queryable, id: string): Promise<ArtifactRecord | undefined> {
  const { rows } = await q.query<ArtifactRecord>(
    `select id, run_id as "runId", step_seq as "stepSeq", media_type as "mediaType", size_bytes as "sizeBytes", sha256, content
     from artifacts where id = $1`,
    [id],
  );
  return rows[0];
}
