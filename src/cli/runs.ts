import { parseArgs } from 'node:util';
import type { OutboundEventRecord, StepRecord } from '../app/records.ts';
import { withUseCases } from '../app/use-case-client.ts';
import { listRunsOperation } from '../app/runs/operations.ts';
import { runJson } from '../app/views.ts';
import { operationSubcommand } from './operation-command.ts';
import { commandGroup, UsageError, type CliIo, type CommandBody } from './command.ts';

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
export function describeStep(step: StepRecord): string {
  const head = `${String(step.seq).padStart(3)}  ${step.kind.padEnd(14)} ${step.status.padEnd(9)}`;
  switch (step.kind) {
    case 'model_request': {
      const data = step.data;
      const estimate = (data['estimate'] ?? {}) as Record<string, number>;
      const offered = (data['offered'] as string[] | undefined) ?? [];
      const withheld = (data['withheld'] as { name: string; reason: string }[] | undefined) ?? [];
      const line = `${head} round ${JSON.stringify(data['round'] ?? null)}: ${estimate['total'] ?? '?'} tokens estimated (system ${estimate['system']}, memory ${estimate['memory']}, history ${estimate['history']}, current ${estimate['current']}, round ${estimate['round']}, tools ${estimate['tools']}) offered [${offered.join(', ')}]${withheld.length > 0 ? ` withheld [${withheld.map((w) => `${w.name}: ${w.reason}`).join('; ')}]` : ''}`;
      return [line, ...loadingLines(data['loading'])].join('\n');
    }
    case 'model_response': {
      const calls = (step.data['toolCalls'] as { name: string }[] | undefined) ?? [];
      const content = typeof step.data['content'] === 'string' ? step.data['content'] : '';
      return `${head} ${calls.length > 0 ? `calls ${calls.map((c) => c.name).join(', ')}` : ''}${content ? ` "${clip(content, 100)}"` : ''}`;
    }
    case 'tool_call':
      return `${head} ${step.toolName} (${step.callId}) ${step.effect?.class ?? ''}/${step.effect?.replay ?? ''}${step.committedAt ? ` commit stamp ${step.committedAt.toISOString()}` : ''} args ${clip(step.arguments, 100)}`;
    case 'observation': {
      const o = step.observation;
      const data = (typeof o['data'] === 'object' && o['data'] !== null ? o['data'] : {}) as Record<
        string,
        unknown
      >;
      // A query provider's call says which provider served it and what it cost of the ceiling.
      const via =
        typeof data['provider'] === 'string'
          ? ` [via ${data['provider']}, ${typeof data['provider_calls'] === 'number' ? data['provider_calls'] : '?'} provider call(s)]`
          : '';
      const line = `${head} ${typeof o['kind'] === 'string' ? o['kind'] : '?'} (${step.callId})${via}: ${clip(typeof o['text'] === 'string' ? o['text'] : '')}`;
      return [line, ...artifactLines(o['artifacts'])].join('\n');
    }
    case 'reply':
      return `${head} "${clip(step.data.body)}"`;
    case 'note':
      return `${head} ${clip(JSON.stringify(step.data))}`;
    default: {
      const never: never = step;
      return `${head} ${JSON.stringify(never)}`;
    }
  }
}

/** One effect as a line: where it went, its delivery state, attempts and what it became. */
function describeEffect(e: OutboundEventRecord): string {
  if (e.kind === 'reply')
    return `reply step ${e.stepSeq} to ${e.target}: ${e.state} as message ${e.externalId ?? '?'}`;
  const made = e.externalId ? ` ${e.externalId}${e.link ? ` ${e.link}` : ''}` : '';
  const why = e.lastError && e.state !== 'delivered' ? ` (${e.lastError})` : '';
  return `effect step ${e.stepSeq} ${e.kind} to ${e.target}: ${e.state} after ${e.attempts} attempt(s)${made}${why}`;
}

async function show(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const id = positionals[0];
  if (!id || positionals.length > 1) throw new UsageError('name exactly one run id');
  const { run, steps, effects } = await withUseCases((call) => call('runs.show', { id }));
  if (values.json) {
    io.out(JSON.stringify(runJson(run, steps, effects), null, 2));
    return 0;
  }
  io.out(`run ${run.id}  ${run.kind}  ${run.status}${run.reason ? ` (${run.reason})` : ''}`);
  io.out(`usage ${JSON.stringify(run.usage)}  budget ${JSON.stringify(run.budget)}`);
  if (run.committedAt) io.out(`crossed its commit boundary at ${run.committedAt.toISOString()}`);
  for (const step of steps) io.out(describeStep(step));
  for (const e of effects) io.out(describeEffect(e));
  return 0;
}

/** `mesh runs show ID`: read a run step by step; `mesh runs list`: find it. */
export const runsCommand: CommandBody = commandGroup({
  show,
  list: operationSubcommand(listRunsOperation),
});
