import type { QuestionRecord, RunRecord, StepRecord } from '../../app/records.ts';
import { budgetFrom, formatSeconds, usageFrom } from '../../app/agents/budget-meters.ts';
import { html, type Html } from './html.ts';

/*
 * The run page as a timeline: what stopped or holds the run, in words, at the top; each budget
 * meter against its limit; each step's start and duration on a waterfall; withheld tools grouped
 * by reason and folded. Bars are SVG attributes, never inline styles (the pages' CSP allows none).
 */

/** Milliseconds as a person reads a duration: `840 ms`, `2.4 s`, `3 min 5 s`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** What stopped the run, or what it waits for, said at the top of its page; '' while it runs. */
export function runHeadline(run: RunRecord, questions: readonly QuestionRecord[]): Html | '' {
  const open = questions.find((q) => q.state === 'open');
  if (run.status === 'awaiting_input' && open)
    return html`<p class="headline waiting" role="status">
      Waiting for an answer to its question: “${open.question}”. Anyone in the conversation may
      answer, until ${open.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC.
    </p>`;
  if (run.status === 'budget_exhausted')
    return html`<p class="headline error" role="alert">
      Stopped: ${run.reason ?? 'a budget ran out'}. The conversation was told what was done and what
      was not.
    </p>`;
  if (run.status === 'failed')
    return html`<p class="headline error" role="alert">
      Failed: ${run.reason ?? 'no reason recorded'}
    </p>`;
  return '';
}

/** One meter: what was spent of what the run may spend (`shown`, ending in ` of <limit>`). */
function meter(label: string, used: number, limit: number, shown: string): Html {
  const high = limit * 0.8;
  const limitText = shown.slice(shown.indexOf(' of ') + 4);
  return html`<li class="meter-row" data-meter="${label}" data-limit-text="${limitText}">
    <span class="meter-label">${label}</span>
    <meter min="0" max="${limit}" value="${Math.min(used, limit)}" high="${high}" optimum="0">
      ${shown}
    </meter>
    <span class="meter-text">${shown}</span>
  </li>`;
}

/** The run's budget meters, each against its limit. */
export function budgetMeters(run: RunRecord, now: Date = new Date()): Html {
  const budget = budgetFrom(run.budget);
  const usage = usageFrom(run.usage);
  const tokens = usage.inputTokens + usage.outputTokens;
  const started = run.startedAt ?? run.createdAt;
  const elapsed = Math.max(
    0,
    (run.finishedAt ?? now).getTime() - started.getTime() - usage.parkedMs,
  );
  const providers = Object.entries(budget.providerCalls);
  return html`<ul class="meters">
    ${meter('rounds', usage.rounds, budget.maxRounds, `${usage.rounds} of ${budget.maxRounds}`)}
    ${meter(
      'tool calls',
      usage.toolCalls,
      budget.maxToolCalls,
      `${usage.toolCalls} of ${budget.maxToolCalls}`,
    )}
    ${meter(
      'tokens',
      tokens,
      budget.maxTokens,
      `${tokens.toLocaleString('en')} of ${budget.maxTokens.toLocaleString('en')}`,
    )}
    ${meter(
      'wall clock',
      elapsed,
      budget.wallClockMs,
      `${durationText(elapsed)} of ${formatSeconds(budget.wallClockMs / 1000)}`,
    )}
    ${meter(
      'compute',
      usage.computeMs,
      budget.maxComputeSeconds * 1000,
      `${durationText(usage.computeMs)} of ${formatSeconds(budget.maxComputeSeconds)}`,
    )}
    ${providers.map(([name, ceiling]) => {
      const calls = usage.providerCalls[name] ?? 0;
      return meter(`${name} calls`, calls, ceiling, `${calls} of ${ceiling}`);
    })}
    ${meter(
      'browser minutes',
      0,
      budget.maxSessionMinutes,
      `0 of ${budget.maxSessionMinutes} (no browser session yet)`,
    )}
  </ul>`;
}

/**
 * Where a run's steps lie in time: its start, how long its timeline is, and when each step ended
 * (a model request ends when its response is recorded: the time spent waiting on the model).
 */
export interface TimelineSpan {
  readonly origin: number;
  readonly length: number;
  readonly ends: ReadonlyMap<number, number>;
}

/** The span a run's steps cover, for their waterfall bars. */
export function timelineOf(run: RunRecord, steps: readonly StepRecord[]): TimelineSpan {
  const origin = (steps[0]?.startedAt ?? run.startedAt ?? run.createdAt).getTime();
  const ends = new Map<number, number>();
  steps.forEach((s, i) => {
    const next = steps[i + 1];
    if (s.kind === 'model_request' && next) ends.set(s.seq, next.startedAt.getTime());
    else if (s.finishedAt) ends.set(s.seq, s.finishedAt.getTime());
  });
  const end = Math.max(origin + 1, ...ends.values(), run.finishedAt?.getTime() ?? 0);
  return { origin, length: end - origin, ends };
}

/** A step's duration, and (given its run's span) its bar on the waterfall. */
export function stepTiming(step: StepRecord, span?: TimelineSpan): Html {
  const end = span?.ends.get(step.seq) ?? step.finishedAt?.getTime();
  const ms =
    end === undefined || (step.kind === 'model_request' && !span?.ends.has(step.seq))
      ? undefined
      : end - step.startedAt.getTime();
  const label = ms === undefined ? 'still going' : durationText(ms);
  if (!span) return html`<span class="duration">${label}</span>`;
  const x = ((step.startedAt.getTime() - span.origin) / span.length) * 1000;
  const width = Math.max(2, ((ms ?? 0) / span.length) * 1000);
  return html`<span class="duration">${label}</span>
    <svg
      class="waterfall ${step.kind}"
      viewBox="0 0 1000 6"
      preserveAspectRatio="none"
      role="img"
      aria-label="${label}, starting ${durationText(step.startedAt.getTime() - span.origin)} into the run"
    >
      <rect x="0" y="2" width="1000" height="2" class="track" />
      <rect x="${x.toFixed(1)}" y="0" width="${Math.min(width, 1000 - x).toFixed(1)}" height="6" />
    </svg>`;
}

/** The tools a request withheld, grouped by reason with counts, folded. */
export function withheldGroups(withheld: readonly { name: string; reason: string }[]): Html | '' {
  if (withheld.length === 0) return '';
  const groups = new Map<string, string[]>();
  for (const w of withheld) groups.set(w.reason, [...(groups.get(w.reason) ?? []), w.name]);
  const sorted = [...groups.entries()].sort((a, b) => b[1].length - a[1].length);
  const summary = sorted
    .slice(0, 3)
    .map(([reason, names]) => `${names.length} ${reason}`)
    .join('; ');
  return html`<details class="withheld">
    <summary>
      <span class="label">Withheld</span> ${withheld.length}
      tool${withheld.length === 1 ? '' : 's'}:
      ${summary}${sorted.length > 3 ? `; and ${sorted.length - 3} more reasons` : ''}
    </summary>
    <ul>
      ${sorted.map(
        ([reason, names]) =>
          html`<li>
            <strong>${names.length}</strong> ${reason}:
            ${names.map((n) => html`<code>${n}</code> `)}
          </li>`,
      )}
    </ul>
  </details>`;
}
