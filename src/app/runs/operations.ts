import { MAX_WAIT_S } from '../conversations/operations.ts';
import {
  AGENT_FIELD,
  AGENT_FILTER_FIELD,
  LIMIT_FIELD,
  listLimitField,
  RUN_FIELD,
} from '../operations/fields.ts';
import { answerRunOperation } from './answer-operation.ts';
import { usageOperation } from './usage-operation.ts';
import { listOutboundOperation } from './outbound-operation.ts';
import { defineOperation } from '../operations/operation.ts';
import { isoText, runSummaryJson } from '../views.ts';
import { promptLines } from './prompt-view.ts';
import { runLines, type RunAnswer } from './run-lines.ts';
import { shortRunId } from './run-ref.ts';

/** The statuses a run can be in, as filters name them. */
export const RUN_STATUSES = [
  'queued',
  'running',
  'awaiting_input',
  'succeeded',
  'failed',
  'interrupted',
  'budget_exhausted',
] as const;

/** A run in a listing: its summary, with its short id and its agent's name. */
export interface RunListing {
  readonly runs: readonly (Record<string, unknown> & {
    readonly run_id: string;
    readonly short_id: string;
    readonly agent: string;
    readonly status: string;
    readonly reason: string | null;
    readonly created_at: Date | string;
    readonly finished_at: Date | string | null;
  })[];
}

export const listRunsOperation = defineOperation({
  name: 'runs.list',
  summary: 'List runs, newest first, across agents or of one agent, in any status or one',
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: [],
    properties: {
      agent: AGENT_FILTER_FIELD,
      status: { enum: RUN_STATUSES, description: `only runs in this status` },
      hours: {
        type: 'integer',
        minimum: 1,
        maximum: 2160,
        description: 'only runs created in the last this many hours (1-2160)',
      },
      limit: listLimitField(50),
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/runs' },
  cli: {
    command: ['runs', 'list'],
    print: (out: RunListing) =>
      out.runs.length === 0
        ? ['No runs.']
        : out.runs.map(
            (r) =>
              `${r.short_id}  ${r.agent.padEnd(16)} ${r.status.padEnd(16)} ${isoText(r.created_at)}${r.reason ? `  ${r.reason}` : ''}`,
          ),
  },
  async run(mesh, input): Promise<RunListing> {
    const [{ requireAgent }, { listRuns }, { listAgents }] = await Promise.all([
      import('../agents/agents.ts'),
      import('../../store/run-reads.ts'),
      import('../agents/reads.ts'),
    ]);
    const agent = input.agent === undefined ? undefined : await requireAgent(mesh, input.agent);
    const [runs, agents] = await Promise.all([
      listRuns(mesh.db, {
        ...(agent ? { agentId: agent.id } : {}),
        ...(input.status === undefined ? {} : { status: input.status }),
        ...(input.hours === undefined ? {} : { sinceHours: input.hours }),
        limit: input.limit ?? 50,
      }),
      agent ? Promise.resolve([agent]) : listAgents(mesh),
    ]);
    const names = new Map(agents.map((a) => [a.id, a.name]));
    return {
      runs: runs.map((run) => ({
        ...(runSummaryJson(run) as RunListing['runs'][number]),
        short_id: shortRunId(run.id),
        agent: names.get(run.agentId) ?? run.agentId,
      })),
    };
  },
});

export const showRunOperation = defineOperation({
  name: 'runs.show',
  summary:
    'A run and every step: model requests (offered and withheld tools, token estimate), tool calls with commit stamps, observations, the reply; and its effects with their delivery states',
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['run'],
    properties: {
      run: RUN_FIELD,
      wait: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_S,
        description: `wait up to this many seconds (0-${MAX_WAIT_S}) for the run to settle first`,
      },
      request: {
        type: 'integer',
        minimum: 1,
        maximum: 100_000,
        description:
          'also its model request N (1 for the first): exactly what the model was sent (messages after redaction, tools, parameters)',
      },
    },
  },
  errors: ['run_not_found', 'run_id_ambiguous', 'request_not_found'],
  http: { method: 'GET', path: '/api/runs/{run}' },
  cli: {
    command: ['runs', 'show'],
    positionals: ['run'],
    print: (out: RunAnswer) => (out.prompt ? promptLines(out.run_id, out.prompt) : runLines(out)),
  },
  async run(mesh, input): Promise<RunAnswer> {
    const [{ resolveRun }, { runEffects }, { runJson }, { runQuestions, runBrowserSessions }] =
      await Promise.all([
        import('./run-ref.ts'),
        import('./outbound-view.ts'),
        import('../views.ts'),
        import('./reads.ts'),
      ]);
    const found = await resolveRun(mesh, input.run, 'input.run');
    const run = input.wait
      ? ((await mesh.runs.settled(found.id, input.wait * 1000)) ?? found)
      : found;
    const [steps, effects, questions, sessions] = await Promise.all([
      mesh.ledger.steps(run.id),
      runEffects(mesh, run.id),
      runQuestions(mesh, run.id),
      runBrowserSessions(mesh, run.id),
    ]);
    const answer = runJson(run, steps, effects, questions, sessions) as unknown as RunAnswer;
    if (input.request === undefined) return answer;
    const { promptOf } = await import('./prompt-view.ts');
    return { ...answer, prompt: await promptOf(mesh, run.id, steps, input.request) };
  },
});

export const agentRunsOperation = defineOperation({
  name: 'runs.agent',
  summary: "An agent's runs, newest first",
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent'],
    properties: {
      agent: AGENT_FIELD,
      limit: LIMIT_FIELD,
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/runs' },
  cli: {
    notOnCli: '`mesh runs list --agent A` lists the same runs, with short ids and the agent',
  },
  async run(mesh, input): Promise<{ runs: Record<string, unknown>[] }> {
    const [{ requireAgent }, { listRuns }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./reads.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const runs = await listRuns(mesh, { agentId: agent.id, limit: input.limit ?? 50 });
    return { runs: runs.map(runSummaryJson) };
  },
});

/** An artifact as the API answers it: text as text, other bytes as base64. */
export interface ArtifactAnswer {
  readonly id: string;
  readonly run_id: string;
  readonly step_seq: number | null;
  readonly media_type: string;
  readonly size_bytes: number;
  readonly sha256: string;
  readonly content: string | null;
  readonly content_base64: string | null;
}

export const showArtifactOperation = defineOperation({
  name: 'runs.artifact',
  summary: 'An observation stored whole as an artifact (its step shows the head and tail)',
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['run', 'artifact'],
    properties: {
      run: RUN_FIELD,
      artifact: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description: 'the artifact, by id (its step names it)',
      },
    },
  },
  errors: ['run_not_found', 'run_id_ambiguous', 'artifact_not_found'],
  http: { method: 'GET', path: '/api/runs/{run}/artifacts/{artifact}' },
  cli: {
    command: ['runs', 'artifact'],
    positionals: ['run', 'artifact'],
    print: (a: ArtifactAnswer) =>
      a.content === null
        ? [
            `${a.media_type}, ${a.size_bytes} bytes (sha256 ${a.sha256}): not text; --json gives it as base64, GET /api/runs/${a.run_id}/artifacts/${a.id}/content as bytes`,
          ]
        : [a.content],
  },
  async run(mesh, input): Promise<ArtifactAnswer> {
    const { runArtifact } = await import('./artifacts.ts');
    const artifact = await runArtifact(mesh, input.run, input.artifact, 'input.run');
    const textual =
      artifact.mediaType.startsWith('text/') || artifact.mediaType.startsWith('application/json');
    return {
      id: artifact.id,
      run_id: artifact.runId,
      step_seq: artifact.stepSeq,
      media_type: artifact.mediaType,
      size_bytes: Number(artifact.sizeBytes),
      sha256: artifact.sha256,
      // Bytes that are not text would not survive UTF-8: they come as base64 (or from /content).
      content: textual ? Buffer.from(artifact.content).toString('utf8') : null,
      content_base64: textual ? null : Buffer.from(artifact.content).toString('base64'),
    };
  },
});

export const runOperations = [
  listRunsOperation,
  showRunOperation,
  showArtifactOperation,
  agentRunsOperation,
  answerRunOperation,
  usageOperation,
  listOutboundOperation,
] as const;
