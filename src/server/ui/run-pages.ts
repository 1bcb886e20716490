import type { RemoteNameOrigin } from '../../app/mcp/catalog.ts';
import type { AgentRecord, OutboundEventRecord, RunRecord, StepRecord } from '../../app/records.ts';
import { isRenderable } from '../artifact-response.ts';
import { isUuid } from '../ids.ts';
import type { BrowserSessionRecord, QuestionRecord } from '../../app/records.ts';
import { questionPanel } from './question-panel.ts';
import {
  budgetMeters,
  runHeadline,
  stepTiming,
  timelineOf,
  withheldGroups,
  type TimelineSpan,
} from './run-timeline.ts';
import { html, type Html } from './html.ts';
import { agentHeader, layout, listTable, time, type PageSession } from './layout.ts';

/** The Runs tab: the agent's runs, newest first. */
export function runsPage(
  session: PageSession,
  agent: AgentRecord,
  runs: readonly RunRecord[],
): string {
  return layout(
    `${agent.name} · Runs`,
    session,
    html`${agentHeader(agent, 'runs')}
    ${listTable(
      runs,
      'No runs yet.',
      ['Run', 'Kind', 'Status', 'Started', 'Finished'],
      (r) =>
        html`<tr>
          <td><a href="/runs/${r.id}">${r.id.slice(0, 8)}</a></td>
          <td>${r.kind}</td>
          <td>
            <span class="status ${r.status}">${r.status}</span
            >${r.reason ? html` <span class="muted">${r.reason}</span>` : ''}
          </td>
          <td>${time(r.createdAt)}</td>
          <td>${time(r.finishedAt)}</td>
        </tr>`,
    )}`,
  );
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The parts of a request's token estimate, in the order they are priced. */
const ESTIMATE_PARTS = ['system', 'memory', 'history', 'current', 'round', 'tools'] as const;

/** The artifacts an observation links, as the browser may show them. */
function artifactList(runId: string, raw: unknown): Html | '' {
  if (!Array.isArray(raw) || raw.length === 0) return '';
  const items = raw.flatMap((value: unknown) => {
    if (typeof value !== 'object' || value === null) return [];
    const entry = value as Record<string, unknown>;
    const id = str(entry['artifactId']);
    if (!isUuid(id)) return [];
    const kind = str(entry['kind']);
    const mediaType = str(entry['mediaType']);
    const size = typeof entry['sizeBytes'] === 'number' ? entry['sizeBytes'] : 0;
    const src = `/runs/${runId}/artifacts/${id}`;
    const label = `${kind} ${mediaType}, ${size} bytes`;
    const caption = html`<span class="muted"
      >${kind} <code>${mediaType}</code> · ${size} bytes · artifact <code>${id}</code>${
        entry['uri'] ? html` · <code>${str(entry['uri'])}</code>` : ''
      }</span
    >`;
    const shown =
      kind === 'image' && isRenderable(mediaType)
        ? html`<img src="${src}" alt="${label}" loading="lazy" />`
        : kind === 'audio' && isRenderable(mediaType)
          ? html`<audio controls src="${src}" preload="none"></audio>`
          : html`<a href="${src}" download>Download</a>`;
    return [html`<li class="artifact ${kind}" data-artifact="${id}">${shown} ${caption}</li>`];
  });
  return items.length === 0
    ? ''
    : html`<ul class="artifacts">
        ${items}
      </ul>`;
}

/** A request's tool loading: whether the index was used, both token figures, what changed. */
function loadingBody(raw: unknown): Html | '' {
  if (typeof raw !== 'object' || raw === null) return '';
  const l = raw as Record<string, unknown>;
  const list = (key: string) =>
    Array.isArray(l[key]) ? (l[key] as Record<string, unknown>[]) : [];
  const num = (key: string) => (typeof l[key] === 'number' ? String(l[key]) : '?');
  const changes = [
    ...list('loaded').map(
      (e) =>
        html`<li>loaded <code>${str(e['name'])}</code> — searched for “${str(e['query'])}”</li>`,
    ),
    ...list('unloaded').map(
      (e) => html`<li>unloaded <code>${str(e['name'])}</code> — ${str(e['reason'])}</li>`,
    ),
    ...list('refused').map(
      (e) => html`<li>refused <code>${str(e['name'])}</code> — ${str(e['reason'])}</li>`,
    ),
  ];
  return html`<div class="loading" data-index="${l['index'] === true ? 'yes' : 'no'}">
    <span class="label">Tool loading</span>
    ${l['index'] === true ? html`<strong>index</strong>` : html`<strong>all schemas</strong>`}
    <span class="muted"
      >carrying every schema ${num('allTokens')} tokens, the index
      ${num('indexTokens')}${
        l['index'] === true
          ? `; loaded ${num('loadedTokens')} of a ${num('shareTokens')}-token share`
          : ''
      }</span
    >
    ${
      changes.length > 0
        ? html`<ul>
            ${changes}
          </ul>`
        : ''
    }
  </div>`;
}

function stepBody(step: StepRecord, mapped: ReadonlyMap<string, RemoteNameOrigin>): Html {
  const data: Readonly<Record<string, unknown>> = 'data' in step ? step.data : {};
  switch (step.kind) {
    case 'model_request': {
      const estimate = (data['estimate'] ?? {}) as Record<string, number | undefined>;
      const offered = (data['offered'] as string[] | undefined) ?? [];
      const withheld = (data['withheld'] as { name: string; reason: string }[] | undefined) ?? [];
      return html`<p>
          Round ${JSON.stringify(data['round'] ?? '?')} ·
          <strong class="estimate">${estimate['total'] ?? '?'} tokens</strong> estimated
          <span class="muted"
            >(${ESTIMATE_PARTS.map((k) => `${k} ${estimate[k] ?? '?'}`).join(', ')} of a
            ${estimate['budget'] ?? '?'}-token
            budget${
              estimate['droppedTurns'] ? `; ${estimate['droppedTurns']} older turns left out` : ''
            }${
              estimate['reducedObservations']
                ? `; ${estimate['reducedObservations']} older results reduced to an excerpt (kept whole in their steps)`
                : ''
            })</span
          >
        </p>
        <div class="offered">
          <span class="label">Offered</span>
          ${
            data['lastRound'] === true
              ? html`<strong class="last-round">last round: tools removed</strong>`
              : offered.length === 0
                ? html`<span class="muted">no tools</span>`
                : offered.map((n) => html`<code class="tool">${n}</code> `)
          }
        </div>
        ${loadingBody(data['loading'])} ${withheldGroups(withheld)}
        ${
          data['prompt']
            ? html`<p>
                <a class="prompt-link" href="/runs/${step.runId}/steps/${String(step.seq)}/prompt"
                  >What the model was sent</a
                >
              </p>`
            : ''
        }`;
    }
    case 'model_response': {
      const calls = (data['toolCalls'] as { name: string; arguments?: string }[] | undefined) ?? [];
      return html`${str(data['content']) ? html`<p class="body">${str(data['content'])}</p>` : ''}
      ${calls.length > 0 ? html`<p>Calls ${calls.map((c) => html`<code class="tool">${c.name}</code> `)}</p>` : ''}`;
    }
    case 'tool_call': {
      const origin = step.toolName ? mapped.get(step.toolName) : undefined;
      return html`<p>
          <code class="tool">${step.toolName ?? '?'}</code>
          ${origin ? html`<span class="muted">(${origin.provider}’s <code>${origin.tool}</code>)</span>` : ''}
          <span class="badge ${step.effect?.class ?? ''}">${step.effect?.class ?? ''}</span>
          ${step.effect?.replay ?? ''}
          <span class="muted">call ${step.callId ?? '?'}</span>
        </p>
        ${step.committedAt ? html`<p class="commit">Commit stamp ${time(step.committedAt)}</p>` : ''}
        <pre>${step.arguments ?? ''}</pre>`;
    }
    case 'observation': {
      const o = step.observation ?? {};
      const truncated = o['truncated'] as { artifactId?: string; totalBytes?: number } | undefined;
      return html`<p>
          <span class="badge ${o['kind'] === 'tool_error' ? 'error' : ''}"
            >${o['kind'] === 'tool_error' ? 'tool error' : str(o['kind'])}</span
          >
          <span class="muted">call ${step.callId ?? '?'}</span>
        </p>
        <pre>${str(o['text'])}</pre>
        ${truncated ? html`<p class="muted">Truncated: ${truncated.totalBytes ?? '?'} bytes in artifact ${truncated.artifactId ?? '?'}</p>` : ''}
        ${artifactList(step.runId, o['artifacts'])}`;
    }
    case 'reply':
      return html`<p class="body">${str(data['body'])}</p>`;
    case 'note':
      return html`<pre>${JSON.stringify(data, null, 2)}</pre>`;
    default: {
      const never: never = step;
      return html`${JSON.stringify(never)}`;
    }
  }
}

/** A run and every step of it: what was offered and withheld, calls, commit stamps, observations. */
/** A provider's link, shown as a link only when it is http(s): it is the provider's text. */
function providerLink(link: string | null): Html | '' {
  if (!link) return '';
  return /^https?:\/\//i.test(link) ? html` <a href="${link}" rel="noreferrer">open</a>` : '';
}

/**
 * The run's outbound events — its effects and its reply: where each went, its delivery state,
 * attempts and what it became.
 */
function effectTable(effects: readonly OutboundEventRecord[], live: boolean): Html {
  const headings = ['Step', 'Effect', 'Target', 'Delivery', 'Attempts', 'External id'];
  // A live run's table is there from the start, empty or not: its stream adds and moves rows.
  return html`<section class="effects" data-effects>
    <h2>Outbound events</h2>
    ${
      live
        ? html`<table class="list">
            <thead>
              <tr>
                ${headings.map((h) => html`<th>${h}</th>`)}
              </tr>
            </thead>
            <tbody>
              ${effects.map(effectRow)}
            </tbody>
          </table>`
        : listTable(effects, 'No effects.', headings, effectRow)
    }
  </section>`;
}

/**
 * The run's browser sessions: where each can be watched live while it runs, and its recording
 * (the proof of what the agent did on the web) once it was released.
 */
function browserSessions(runId: string, sessions: readonly BrowserSessionRecord[]): Html {
  return html`<section class="browser-sessions">
    <h2>Browser sessions</h2>
    <ul>
      ${sessions.map(
        (s) =>
          html`<li data-browser-session="${s.id}">
            <span class="status ${s.state}">${s.state.replace('_', ' ')}</span>
            <span class="muted"
              >from
              ${time(s.createdAt)}${s.releasedAt ? html` to ${time(s.releasedAt)}` : ''}${s.releaseReason ? html` (${s.releaseReason})` : ''}</span
            >
            ${s.liveViewUrl && !s.releasedAt && /^https?:\/\//i.test(s.liveViewUrl) ? html` <a href="${s.liveViewUrl}" rel="noreferrer" target="_blank">Live View</a>` : ''}
            ${s.recordingArtifactId ? html` <a href="/runs/${runId}/artifacts/${s.recordingArtifactId}">Recording</a>` : ''}
          </li>`,
      )}
    </ul>
  </section>`;
}

/** One outbound event's row (also what a live run page's stream sends when it changes). */
export function effectRow(e: OutboundEventRecord): Html {
  return html`<tr class="effect" data-effect="${e.id}" data-state="${e.state}">
    <td>${e.stepSeq}</td>
    <td><code>${e.kind}</code></td>
    <td>${e.target}</td>
    <td>
      <span class="status ${e.state}">${e.state}</span>${
        e.lastError && e.state !== 'delivered'
          ? html` <span class="muted">${e.lastError}</span>`
          : ''
      }
    </td>
    <td>${e.attempts}</td>
    <td>${e.externalId ? html`<code>${e.externalId}</code>` : ''}${providerLink(e.link)}</td>
  </tr>`;
}

/**
 * One step of a run page's list (also what its live stream sends for a new step): its start and
 * duration, and with the run's `span` its bar on the waterfall.
 */
export function stepItem(
  s: StepRecord,
  mapped: ReadonlyMap<string, RemoteNameOrigin>,
  span?: TimelineSpan,
): Html {
  return html`<li class="step ${s.kind}" data-kind="${s.kind}" data-seq="${s.seq}">
    <div class="step-head">
      <span class="seq">${s.seq}</span> <strong>${s.kind.replace('_', ' ')}</strong>
      <span class="status ${s.status}">${s.status}</span>
      <span class="muted">${time(s.startedAt)}</span>
      ${stepTiming(s, span)}
    </div>
    ${stepBody(s, mapped)}
  </li>`;
}

/** Whether a run is still being worked on, so its pages follow it live. */
export function isLive(run: RunRecord): boolean {
  return run.status === 'queued' || run.status === 'running';
}

export function runPage(
  session: PageSession,
  agent: AgentRecord | undefined,
  run: RunRecord,
  steps: readonly StepRecord[],
  /** Remote tool names mapped from the server's own (see `mappedRemoteNames`). */
  mapped: ReadonlyMap<string, RemoteNameOrigin> = new Map(),
  effects: readonly OutboundEventRecord[] = [],
  questions: readonly QuestionRecord[] = [],
  sessions: readonly BrowserSessionRecord[] = [],
): string {
  const live = isLive(run);
  const open = questions.find((q) => q.state === 'open');
  const span = timelineOf(run, steps);
  return layout(
    `Run ${run.id.slice(0, 8)}`,
    session,
    html`<h1>Run <code>${run.id}</code></h1>
      ${runHeadline(run, questions)}
      <dl class="summary">
        <dt>Agent</dt>
        <dd>
          ${agent ? html`<a href="/agents/${encodeURIComponent(agent.name)}/runs">${agent.name}</a>` : run.agentId}
        </dd>
        <dt>Kind</dt>
        <dd>${run.kind}</dd>
        <dt>Status</dt>
        <dd>
          <span class="status ${run.status}" data-run-status="${run.id}">${run.status}</span
          ><span class="muted" data-run-reason="${run.id}"
            >${run.reason ? ` ${run.reason}` : ''}</span
          >
        </dd>
        <dt>Budget</dt>
        <dd>${budgetMeters(run)}</dd>
        <dt>Commit boundary</dt>
        <dd>
          ${run.committedAt ? time(run.committedAt) : html`<span class="muted">not crossed</span>`}
        </dd>
        <dt>Created</dt>
        <dd>${time(run.createdAt)}</dd>
        ${
          agent && run.conversationId
            ? html`<dt>Conversation</dt>
                <dd>
                  <a
                    href="/agents/${encodeURIComponent(agent.name)}/chat?conversation=${run.conversationId}"
                    >open</a
                  >
                </dd>`
            : ''
        }
      </dl>
      ${open ? html`${questionPanel(session, open, `/runs/${run.id}`)}` : ''}
      ${effects.length === 0 && !live ? '' : effectTable(effects, live)}
      ${sessions.length === 0 ? '' : browserSessions(run.id, sessions)}
      <ol
        class="steps"
        ${live ? html`data-events="/runs/${run.id}/events" data-after="${steps.at(-1)?.seq ?? 0}"` : ''}
      >
        ${steps.map((s) => stepItem(s, mapped, span))}
      </ol>`,
    live,
  );
}
