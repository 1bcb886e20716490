import type { PromptAnswer } from './prompt-view.ts';
import { isoText } from '../views.ts';

/*
 * A run as lines for a person, read from its wire shape (`runJson`): what `mesh runs show` and
 * `mesh chat` print. One line per step, saying what an operator needs to read the run.
 */

/** A step as the API answers it (`stepJson`). */
export interface StepAnswer {
  readonly seq: number;
  readonly kind: string;
  readonly status: string;
  readonly toolName?: string | null;
  readonly callId?: string | null;
  readonly class?: string | null;
  readonly replay?: string | null;
  readonly arguments?: string | null;
  readonly observation?: Readonly<Record<string, unknown>> | null;
  readonly data?: Readonly<Record<string, unknown>> | null;
  readonly committedAt?: Date | string | null;
}

/** An effect as the API answers it (`effectJson`). */
export interface EffectAnswer {
  readonly step: number;
  readonly kind: string;
  readonly target: string;
  readonly state: string;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly externalId: string | null;
  readonly link: string | null;
}

/** A run as the API answers it (`runJson`). */
export interface RunAnswer {
  readonly run_id: string;
  readonly agent_id: string;
  readonly conversation_id: string | null;
  readonly kind: string;
  readonly status: string;
  readonly reason: string | null;
  readonly usage: unknown;
  readonly budget: unknown;
  readonly committed_at: Date | string | null;
  readonly created_at: Date | string;
  readonly finished_at: Date | string | null;
  readonly steps: readonly StepAnswer[];
  /** With `request`: what that model request was sent (see prompt-view.ts). */
  readonly prompt?: PromptAnswer;
  readonly effects: readonly EffectAnswer[];
  readonly questions: readonly QuestionAnswer[];
  readonly browser_sessions?: readonly BrowserSessionAnswer[];
}

/** A browser session of a run, as `runs show` answers it. */
export interface BrowserSessionAnswer {
  readonly id: string;
  readonly state: string;
  readonly live_view_url: string | null;
  readonly recording_artifact_id: string | null;
  readonly release_reason: string | null;
  readonly taken_over_by?: string | null;
}

/** A question the run asked, as the API answers it. */
export interface QuestionAnswer {
  /** `question` (request_input) or `browser_handoff`; absent from older servers. */
  readonly kind?: string;
  readonly link?: string | null;
  readonly question: string;
  readonly choices: readonly string[];
  readonly state: string;
  readonly expires_at: Date | string;
  readonly answered_by: string | null;
}

/** A question's lines: what was asked, and its answer, its expiry or how to answer it. */
function questionLines(run: RunAnswer, q: QuestionAnswer): string[] {
  if (q.kind === 'browser_handoff') return handoffLines(run, q);
  const head = `question (${q.state}): ${clip(q.question)}${q.choices.length > 0 ? ` [${q.choices.join(' | ')}]` : ''}`;
  if (q.state === 'answered') return [head, `  answered by ${q.answered_by ?? '?'}`];
  if (q.state === 'expired') return [head, `  expired unanswered at ${isoText(q.expires_at)}`];
  return [
    head,
    `  waits until ${isoText(q.expires_at)}; anyone in the conversation answers: mesh runs answer ${run.run_id.slice(0, 8)} "TEXT"`,
  ];
}

/** A browser handoff's lines: what the person is to do, where, and its hand-back. */
function handoffLines(run: RunAnswer, q: QuestionAnswer): string[] {
  const head = `browser handoff (${q.state}): ${clip(q.question)}`;
  if (q.state === 'answered') return [head, `  handed back by ${q.answered_by ?? '?'}`];
  if (q.state === 'expired') return [head, `  no one handed it back by ${isoText(q.expires_at)}`];
  return [
    head,
    `  take the browser over in Live View: ${q.link ?? '(none)'}`,
    `  waits until ${isoText(q.expires_at)}; anyone in the conversation hands it back: mesh runs answer ${run.run_id.slice(0, 8)} "what you did"`,
  ];
}

/** A run's lines: its head, usage and budget, the commit boundary, its steps and effects. */
export function runLines(run: RunAnswer): string[] {
  return [
    `run ${run.run_id}  ${run.kind}  ${run.status}${run.reason ? ` (${run.reason})` : ''}`,
    `usage ${JSON.stringify(run.usage)}  budget ${JSON.stringify(run.budget)}`,
    ...(run.committed_at ? [`crossed its commit boundary at ${isoText(run.committed_at)}`] : []),
    ...run.steps.map(describeStep),
    ...run.effects.map(describeEffect),
    ...(run.questions ?? []).flatMap((q) => questionLines(run, q)),
    ...(run.browser_sessions ?? []).map(
      (b) =>
        `browser session ${b.id}  ${b.state}${b.release_reason ? ` (${b.release_reason})` : ''}${b.live_view_url && b.state !== 'released' ? `  live view ${b.live_view_url}` : ''}${b.taken_over_by ? `  taken over by ${b.taken_over_by}` : ''}${b.recording_artifact_id ? `  recording artifact ${b.recording_artifact_id}` : ''}`,
    ),
  ];
}

function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One line per artifact an observation links: kind, media type, size, id (and URI). */
function artifactLines(raw: unknown): string[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((value: unknown) => {
    const entry: Record<string, unknown> =
      typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
    const field = (k: string) => {
      const v = entry[k];
      return typeof v === 'string' ? v : '?';
    };
    const size = typeof entry['sizeBytes'] === 'number' ? entry['sizeBytes'] : '?';
    const uri = typeof entry['uri'] === 'string' ? ` ${clip(entry['uri'], 100)}` : '';
    return `${' '.repeat(5)}artifact ${field('kind')} ${field('mediaType')} ${size} bytes ${field('artifactId')}${uri}`;
  });
}

/** A request's tool loading on lines of its own: index or not, both figures, what changed. */
function loadingLines(raw: unknown): string[] {
  if (typeof raw !== 'object' || raw === null) return [];
  const l = raw as Record<string, unknown>;
  const list = (key: string) =>
    Array.isArray(l[key]) ? (l[key] as Record<string, unknown>[]) : [];
  const text = (v: unknown) => (typeof v === 'string' ? v : '?');
  const num = (key: string) => (typeof l[key] === 'number' ? String(l[key]) : '?');
  const pad = ' '.repeat(5);
  const head =
    l['index'] === true
      ? `tools: index (every schema ${num('allTokens')} tokens, the index ${num('indexTokens')}; loaded ${num('loadedTokens')} of ${num('shareTokens')})`
      : `tools: every schema (${num('allTokens')} tokens; the index would be ${num('indexTokens')})`;
  return [
    `${pad}${head}`,
    ...list('loaded').map(
      (e) => `${pad}  loaded ${text(e['name'])}: searched for "${clip(text(e['query']), 80)}"`,
    ),
    ...list('unloaded').map((e) => `${pad}  unloaded ${text(e['name'])}: ${text(e['reason'])}`),
    ...list('refused').map((e) => `${pad}  refused ${text(e['name'])}: ${text(e['reason'])}`),
  ];
}

/**
 * One line per step, saying what an operator needs to read the run; an observation adds a line
 * per artifact it links, a model request a line for its tool loading and one per tool it changed.
 */
export function describeStep(step: StepAnswer): string {
  const head = `${String(step.seq).padStart(3)}  ${step.kind.padEnd(14)} ${step.status.padEnd(9)}`;
  switch (step.kind) {
    case 'model_request': {
      const data = step.data ?? {};
      const estimate = (data['estimate'] ?? {}) as Record<string, number>;
      const offered = (data['offered'] as string[] | undefined) ?? [];
      const withheld = (data['withheld'] as { name: string; reason: string }[] | undefined) ?? [];
      const line = `${head} round ${JSON.stringify(data['round'] ?? null)}: ${estimate['total'] ?? '?'} tokens estimated (system ${estimate['system']}, memory ${estimate['memory']}, history ${estimate['history']}, current ${estimate['current']}, round ${estimate['round']}, tools ${estimate['tools']}) offered [${offered.join(', ')}]${withheld.length > 0 ? ` withheld [${withheld.map((w) => `${w.name}: ${w.reason}`).join('; ')}]` : ''}`;
      const last = data['lastRound'] === true ? [`${' '.repeat(5)}last round: tools removed`] : [];
      const reduced = estimate['reducedObservations']
        ? [
            `${' '.repeat(5)}${estimate['reducedObservations']} older results reduced to an excerpt to fit the context (kept whole in their steps)`,
          ]
        : [];
      return [line, ...reduced, ...last, ...loadingLines(data['loading'])].join('\n');
    }
    case 'model_response': {
      const data = step.data ?? {};
      const calls = (data['toolCalls'] as { name: string }[] | undefined) ?? [];
      const content = typeof data['content'] === 'string' ? data['content'] : '';
      return `${head} ${calls.length > 0 ? `calls ${calls.map((c) => c.name).join(', ')}` : ''}${content ? ` "${clip(content, 100)}"` : ''}`;
    }
    case 'tool_call':
      return `${head} ${step.toolName ?? '?'} (${step.callId ?? '?'}) ${step.class ?? ''}/${step.replay ?? ''}${step.committedAt ? ` commit stamp ${isoText(step.committedAt)}` : ''} args ${clip(step.arguments ?? '', 100)}`;
    case 'observation': {
      const o = step.observation ?? {};
      const data = (typeof o['data'] === 'object' && o['data'] !== null ? o['data'] : {}) as Record<
        string,
        unknown
      >;
      // A query provider's call says which provider served it and what it cost of the ceiling.
      const via =
        typeof data['provider'] === 'string'
          ? ` [via ${data['provider']}, ${typeof data['provider_calls'] === 'number' ? data['provider_calls'] : '?'} provider call(s)]`
          : '';
      const line = `${head} ${typeof o['kind'] === 'string' ? o['kind'] : '?'} (${step.callId ?? '?'})${via}: ${clip(typeof o['text'] === 'string' ? o['text'] : '')}`;
      return [line, ...artifactLines(o['artifacts'])].join('\n');
    }
    case 'reply':
      return `${head} "${clip(typeof step.data?.['body'] === 'string' ? step.data['body'] : '')}"`;
    default:
      return `${head} ${clip(JSON.stringify(step.data))}`;
  }
}

/** One effect as a line: where it went, its delivery state, attempts and what it became. */
export function describeEffect(e: EffectAnswer): string {
  if (e.kind === 'reply')
    return `reply step ${e.step} to ${e.target}: ${e.state} as message ${e.externalId ?? '?'}`;
  const made = e.externalId ? ` ${e.externalId}${e.link ? ` ${e.link}` : ''}` : '';
  const why = e.lastError && e.state !== 'delivered' ? ` (${e.lastError})` : '';
  return `effect step ${e.step} ${e.kind} to ${e.target}: ${e.state} after ${e.attempts} attempt(s)${made}${why}`;
}
