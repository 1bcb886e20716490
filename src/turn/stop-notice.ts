import type { Budget, Exhaustion } from '../run/budget.ts';
import type { StepRecord } from '../run/records.ts';
import { ledgerEntries } from './truthful-ledger.ts';

/** How an operator gives later runs more of each meter (the run under way keeps its own). */
const RAISE: Readonly<Record<keyof Budget, string>> = {
  maxRounds: '--rounds N',
  maxToolCalls: '--tool-calls N',
  maxTokens: '--tokens N',
  wallClockMs: '--wall-clock 30m',
  maxComputeSeconds: '--compute 10m',
  maxSessionMinutes: '--session-minutes N',
  questionWaitMs: '--question-wait 24h',
  providerCalls: '',
};

/** Lines of "done" the notice lists before it points at the run view for the rest. */
const DONE_LINES = 12;

/** The calls the run's model asked for that never ran: no observation was recorded for them. */
function unrun(steps: readonly StepRecord[], settled: ReadonlySet<string>): string[] {
  const observed = new Set(steps.flatMap((s) => (s.kind === 'observation' ? [s.callId] : [])));
  const asked: string[] = [];
  for (const step of steps) {
    if (step.kind !== 'model_response') continue;
    const calls = step.data['toolCalls'];
    if (!Array.isArray(calls)) continue;
    for (const call of calls) {
      if (typeof call !== 'object' || call === null || Array.isArray(call)) continue;
      const { id, name } = call as Record<string, unknown>;
      if (
        typeof id === 'string' &&
        typeof name === 'string' &&
        !observed.has(id) &&
        !settled.has(id)
      )
        asked.push(name);
    }
  }
  return asked;
}

/**
 * What the conversation is told when a run stops before finishing: `headline` says why, then what
 * the run did (from the ledger of what Mesh recorded, never from what was asked) and what it did
 * not, and `raise` how an operator gives later runs more. `answer` is what the model said last,
 * when it said something; `settled` are calls not to list as never run (a question that expired).
 */
export function stopNotice(input: {
  readonly headline: string;
  readonly steps: readonly StepRecord[];
  readonly raise?: string;
  readonly answer?: string;
  readonly settled?: readonly string[];
}): string {
  const lines = [input.headline];
  const entries = ledgerEntries(input.steps);
  if (entries.length === 0) lines.push('', 'Done: nothing; no tool call ran.');
  else {
    lines.push('', `Done (${entries.length} tool call${entries.length === 1 ? '' : 's'}):`);
    for (const e of entries.slice(0, DONE_LINES))
      lines.push(`- ${e.tool}: ${e.outcome} (${e.detail})`);
    if (entries.length > DONE_LINES)
      lines.push(`- and ${entries.length - DONE_LINES} more; the run's page lists every step`);
  }
  lines.push('', 'Not done:');
  for (const name of unrun(input.steps, new Set(input.settled)))
    lines.push(`- ${name}: asked for, never run`);
  lines.push('- the answer to this message: it is not finished');
  if (input.raise)
    lines.push('', `An operator can give this agent's later runs more with \`${input.raise}\`.`);
  const answer = input.answer?.trim();
  return answer ? `${answer}\n\n${lines.join('\n')}` : lines.join('\n');
}

/** What the conversation is told when a run stops on a budget: which limit, done, not done. */
export function exhaustionNotice(input: {
  readonly exhaustion: Exhaustion;
  readonly steps: readonly StepRecord[];
  readonly agentName: string;
  readonly answer?: string;
}): string {
  const limit = input.exhaustion.reason.replace(/^budget exhausted:\s*/, '');
  const flag = RAISE[input.exhaustion.budget];
  return stopNotice({
    headline: `I stopped before finishing: this run's budget ran out (${limit}).`,
    steps: input.steps,
    ...(flag === '' ? {} : { raise: `mesh agents budget ${input.agentName} ${flag}` }),
    ...(input.answer === undefined ? {} : { answer: input.answer }),
  });
}
