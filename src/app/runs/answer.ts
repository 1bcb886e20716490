import { randomUUID } from 'node:crypto';
import { observationJson } from '../../run/observation-json.ts';
import { MeshError } from '../../tool/errors.ts';
import { handBackObservation } from '../../turn/browser-handoff.ts';
import { answerObservation } from '../../turn/request-input.ts';
import type { Mesh } from '../mesh.ts';
import { runQueued } from '../conversations/turns.ts';
import { InvalidInputError } from '../operations/input.ts';
import { resolveRun } from './run-ref.ts';

/** What answering a run's question came to. */
export interface Answered {
  readonly runId: string;
  readonly conversationId: string;
  readonly messageId: string;
  readonly answeredBy: string;
}

/**
 * Answers the question a run parked on, as `actor`: any participant of the run's conversation
 * (anyone who has spoken in it), not only the person who asked. The answer is an inbound message
 * attributed to them and the asking call's observation; the run is queued, and a worker resumes
 * it. Refused, with nothing written: a run not waiting for an answer (never parked, or answered
 * already — of two answers at once, one wins), a question past its expiry, an actor outside the
 * conversation, a blank answer.
 */
export async function answerRun(
  mesh: Mesh,
  input: {
    readonly run: string;
    readonly body: string;
    readonly actor: string;
    /** The credential's actor, when a relay token answers for `actor`. */
    readonly relayedBy?: string;
  },
  field = 'run',
): Promise<Answered> {
  if (input.body.trim() === '')
    throw new InvalidInputError('`body` is blank: an answer says something', 'body');
  const run = await resolveRun(mesh, input.run, field);
  const messageId = randomUUID();
  const said = { actor: input.actor, body: input.body, messageId };
  const answered = await mesh.ledger.answer({
    runId: run.id,
    actor: input.actor,
    ...(input.relayedBy ? { relayedBy: input.relayedBy } : {}),
    body: input.body,
    messageId,
    // What the parking call observes depends on what the run waited for.
    observation: {
      question: observationJson(answerObservation(said)),
      browser_handoff: observationJson(handBackObservation(said)),
    },
  });
  if (answered.kind === 'refused') {
    switch (answered.code) {
      case 'run_not_found':
        throw new MeshError('run_not_found', 'no run with that id');
      case 'not_awaiting_input':
        throw new MeshError(
          'not_awaiting_input',
          `run ${run.id} is ${answered.status ?? 'gone'}, not waiting for an answer: it asked no question, or it was answered already`,
          { run_id: run.id, status: answered.status ?? null },
        );
      case 'question_expired':
        throw new MeshError(
          'question_expired',
          `run ${run.id}'s question expired before this answer; the run ends without it`,
          { run_id: run.id },
        );
      case 'not_a_participant':
        throw new MeshError(
          'not_a_participant',
          `the answering actor has not taken part in run ${run.id}'s conversation; only its participants may answer`,
          { run_id: run.id },
        );
    }
  }
  // The run is queued: this process's worker (or any replica's) resumes it.
  runQueued(mesh);
  return {
    runId: run.id,
    conversationId: answered.conversationId,
    messageId: answered.message.id,
    answeredBy: input.actor,
  };
}
