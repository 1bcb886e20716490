import { randomUUID } from 'node:crypto';
import {
  COMMITMENTS_SERVICE,
  type Commitment,
  type CommitmentsService,
} from '../../../tools/agent/agent-services.ts';
import {
  fulfilCommitment,
  insertCommitment,
  openCommitments,
  type CommitmentRow,
} from '../../store/commitments.ts';
import type { Db } from '../../store/db.ts';
import type { Redactor } from '../../tool/redaction.ts';
import type { Mesh } from '../mesh.ts';
import type { MeshServiceFactory } from '../service-host.ts';

export type { Commitment };

/** A commitment as the verbs, the API and the CLI show it. */
export function commitmentOf(row: CommitmentRow): Commitment {
  return {
    id: row.id,
    text: row.text,
    due: row.dueAt ? row.dueAt.toISOString() : null,
    state: row.state,
    note: row.note,
  };
}

/**
 * The commitment verbs' store over the database: a commitment belongs to the agent and to the
 * conversation of the run that made it (read from the run, never from the model). Its text and
 * note are redacted of held secrets like every message the agent writes.
 */
export function commitmentStore(db: Db, redactor: Redactor | undefined): CommitmentsService {
  const clean = (s: string) => (redactor ? redactor.text(s) : s);
  return {
    async commit(ctx, text, due) {
      const row = await insertCommitment(db, {
        id: randomUUID(),
        agentId: ctx.agentId,
        runId: ctx.runId,
        callId: ctx.callId,
        text: clean(text),
        dueAt: due,
        reminderMessageId: randomUUID(),
      });
      return commitmentOf(row);
    },
    async fulfil(ctx, id, note) {
      const row = await fulfilCommitment(db, {
        id,
        agentId: ctx.agentId,
        runId: ctx.runId,
        note: clean(note),
      });
      return row && commitmentOf(row);
    },
    async open(ctx) {
      return (await openCommitments(db, ctx.agentId)).map(commitmentOf);
    },
  };
}

/** The commitment verbs' store, as the services seam builds it. */
export const commitmentsService: MeshServiceFactory<CommitmentsService> = {
  key: COMMITMENTS_SERVICE,
  create: ({ db, redactor }) => commitmentStore(db, redactor),
};

/** An agent's open commitments, for its page, `mesh agents show` and the turn's instructions. */
export async function agentCommitments(mesh: Mesh, agentId: string): Promise<Commitment[]> {
  return (await openCommitments(mesh.reads.db, agentId)).map(commitmentOf);
}
