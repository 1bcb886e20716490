/**
 * The effect-tool crash campaign: scripted runs that open a Linear issue, post a Slack message and
 * open a GitHub issue through the real packages, against the loopback fakes, driven by child workers killed with
 * SIGKILL between recording an effect and sending it, right after sending it (before its answer
 * is stored), or at a random moment, then resumed by the next child. Afterwards the fakes and the
 * ledger are compared: Linear (which reconciles, by our key as the issue's id) and GitHub (which
 * reconciles, by the marker carrying our key in the issue's body) must have each issue exactly
 * once and every call delivered; Slack (which cannot be asked) must never have a
 * message twice, and a post cut after sending must be reported unknown.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunLedger } from '../../src/run/ledger.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { connect } from '../../src/store/connect.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { runStore } from '../../src/store/run-store.ts';
import { startGitHubFake, type GitHubFake } from '../support/github-fake.ts';
import { startLinearFake, type LinearFake } from '../support/linear-fake.ts';
import { freshPostgresUrl } from '../support/postgres.ts';
import { startSlackFake, type SlackFake } from '../support/slack-fake.ts';
import { bundleChild, random, runChild } from './campaign.ts';

export interface EffectCampaignOptions {
  readonly database: 'pglite' | 'postgres';
  readonly runs: number;
  /** Kill this many children (then let the rest run to the end). */
  readonly kills: number;
  readonly seed?: number;
  readonly log?: (line: string) => void;
}

export interface EffectCampaignResult {
  readonly runs: number;
  readonly kills: number;
  /** Kills at each outbound point (the rest were timer kills). */
  readonly killsAfterRecord: number;
  readonly killsAfterSend: number;
  /** Linear issues made more than once for one call, and Slack messages posted twice. */
  readonly duplicateEffects: number;
  /** Linear calls not delivered exactly once (the provider reconciles: none may be unknown). */
  readonly linearUnsettled: number;
  /** GitHub issues not delivered exactly once (reconciled by the marker: none may be unknown). */
  readonly githubUnsettled: number;
  /** Slack posts reported unknown (each a cut after sending, never re-posted). */
  readonly slackUnknown: number;
  /** Slack posts cut after sending that were not reported unknown, or reported wrongly. */
  readonly slackMisreported: number;
  readonly unfinishedRuns: number;
  /** One line for each call that did not settle as it must: which, what the fake holds, what was recorded. */
  readonly unsettled: readonly string[];
  readonly problems: readonly string[];
  readonly seed: number;
}

const LINEAR_KEY = 'lin_api_crashCampaignKey0123456789';
const SLACK_TOKEN = 'xoxb-crash-campaign-token';
const GITHUB_TOKEN = 'ghp_crashCampaignToken0123456789ab';
const REPO = 'acme/widgets';
const childSource = join(dirname(fileURLToPath(import.meta.url)), 'effect-child.ts');

function script(i: number) {
  return [
    {
      id: `r${i}linear`,
      name: 'create_linear_issue',
      arguments: JSON.stringify({ title: `deploy failing r${i}` }),
    },
    {
      id: `r${i}slack`,
      name: 'post_slack_message',
      arguments: JSON.stringify({ channel: '#ops', text: `deploy failing r${i}` }),
    },
    {
      id: `r${i}github`,
      name: 'create_github_issue',
      arguments: JSON.stringify({ repo: REPO, title: `deploy failing r${i}` }),
    },
  ];
}

async function createRuns(db: Db, agentId: string, from: number, count: number): Promise<void> {
  const ledger = new RunLedger(runStore(db));
  for (let i = from; i < from + count; i++) {
    await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'crash-test' },
      budget: { maxToolCalls: 10 },
      checkpoint: scriptCheckpoint(script(i)),
    });
  }
}

/** Runs the campaign and compares the fakes with the ledger. */
export async function runEffectCampaign(
  options: EffectCampaignOptions,
): Promise<EffectCampaignResult> {
  const seed = options.seed ?? randomInt(2 ** 31);
  options.log?.(`crash-effects: seed=${seed}`);
  const next = random(seed);
  const linear = await startLinearFake();
  linear.keys.add(LINEAR_KEY);
  const slack = await startSlackFake();
  slack.tokens.add(SLACK_TOKEN);
  const github = await startGitHubFake();
  github.users.set(GITHUB_TOKEN, {
    login: 'mesh-agent',
    id: 4242,
    name: 'Mesh Agent',
    email: null,
  });
  github.repos.set(REPO, { defaultBranch: 'main' });
  const home = mkdtempSync(join(tmpdir(), 'mesh-crash-effects-'));
  const childPath = await bundleChild(
    join(dirname(childSource), '..', '..', 'test-output'),
    childSource,
  );
  const pgFresh = options.database === 'postgres' ? await freshPostgresUrl() : undefined;
  const dbEnv: NodeJS.ProcessEnv = pgFresh
    ? { DATABASE_URL: pgFresh.url }
    : { MESH_HOME: home, DATABASE_URL: '' };
  const open = () => connect(pgFresh ? { databaseUrl: pgFresh.url } : { meshHome: home });

  let db = await open();
  const cut: { point: string; callId: string }[] = [];
  let kills = 0;
  const problems: string[] = [];
  try {
    await migrate(db);
    const agentId = randomUUID();
    await insertAgent(db, { id: agentId, name: 'crash-effects-agent' });
    await createRuns(db, agentId, 0, options.runs);
    let runs = options.runs;
    await db.close();

    // One child at a time: each kill is then about one known call.
    for (;;) {
      const killing = kills < options.kills;
      const timerKill = killing && next() < 0.2;
      const point = next() < 0.5 ? 'after_record' : 'after_send';
      const outcome = await runChild(
        childPath,
        {
          ...dbEnv,
          LINEAR_URL: linear.url,
          SLACK_URL: slack.apiUrl,
          LINEAR_KEY,
          SLACK_TOKEN,
          GITHUB_URL: github.baseUrl,
          GITHUB_TOKEN,
          LEASE_MS: '300',
          ...(killing && !timerKill
            ? { KILL_POINT: point, KILL_NTH: String(1 + Math.floor(next() * 2)) }
            : {}),
        },
        timerKill ? 150 + Math.floor(next() * 800) : undefined,
      );
      if (outcome.killed) {
        kills++;
        if (outcome.killedAt) cut.push(outcome.killedAt);
        options.log?.(
          `kill ${kills}: ${outcome.killedAt ? `${outcome.killedAt.point} ${outcome.killedAt.callId}` : 'timer'}`,
        );
        continue;
      }
      if (outcome.stderr.trim() !== '') {
        problems.push(`child failed: ${outcome.stderr.trim().split('\n').slice(-3).join(' | ')}`);
        break;
      }
      // The child finished every run: add more until enough kills were made.
      if (kills >= options.kills) break;
      db = await open();
      await createRuns(db, agentId, runs, 2);
      runs += 2;
      await db.close();
    }
    db = await open();
    return {
      runs,
      kills,
      killsAfterRecord: cut.filter((c) => c.point === 'outbound:after_record').length,
      killsAfterSend: cut.filter((c) => c.point === 'outbound:after_send').length,
      ...(await verify(db, runs, { linear, slack, github }, cut)),
      problems,
      seed,
    };
  } finally {
    await db.close().catch(() => undefined);
    await linear.close();
    await slack.close();
    await github.close();
    await pgFresh?.drop();
    rmSync(home, { recursive: true, force: true });
  }
}

async function verify(
  db: Db,
  runs: number,
  fakes: { linear: LinearFake; slack: SlackFake; github: GitHubFake },
  cut: readonly { point: string; callId: string }[],
): Promise<
  Pick<
    EffectCampaignResult,
    | 'duplicateEffects'
    | 'linearUnsettled'
    | 'githubUnsettled'
    | 'slackUnknown'
    | 'slackMisreported'
    | 'unfinishedRuns'
    | 'unsettled'
  >
> {
  const { rows: unfinished } = await db.query<{ n: number }>(
    `select count(*)::int as n from runs where status <> 'succeeded'`,
  );
  const { rows: observations } = await db.query<{ call_id: string; kind: string }>(
    `select call_id, observation->>'kind' as kind from run_steps where kind = 'observation'`,
  );
  const kindOf = new Map(observations.map((o) => [o.call_id, o.kind]));
  let duplicateEffects = 0;
  const { linear, slack, github } = fakes;
  let linearUnsettled = 0;
  let githubUnsettled = 0;
  let slackUnknown = 0;
  let slackMisreported = 0;
  const unsettled: string[] = [];
  const note = (callId: string, made: number) =>
    unsettled.push(`${callId}: made=${made} observation=${kindOf.get(callId) ?? 'none'}`);
  const issues = [...linear.issues.values()];
  for (let i = 0; i < runs; i++) {
    const title = `deploy failing r${i}`;
    const made = issues.filter((issue) => issue.title === title).length;
    duplicateEffects += Math.max(0, made - 1);
    if (made !== 1 || kindOf.get(`r${i}linear`) !== 'result') {
      linearUnsettled++;
      note(`r${i}linear`, made);
    }

    const opened = github.issues.filter((issue) => issue.title === title).length;
    duplicateEffects += Math.max(0, opened - 1);
    if (opened !== 1 || kindOf.get(`r${i}github`) !== 'result') {
      githubUnsettled++;
      note(`r${i}github`, opened);
    }

    const posted = slack.posted.filter((p) => p.text === title).length;
    duplicateEffects += Math.max(0, posted - 1);
    const kind = kindOf.get(`r${i}slack`);
    if (kind === 'unknown_outcome') slackUnknown++;
    // Reported delivered must match the world; an unknown may or may not have been posted.
    if ((kind === 'result' && posted !== 1) || (kind !== 'result' && kind !== 'unknown_outcome')) {
      slackMisreported++;
      note(`r${i}slack`, posted);
    }
  }
  // The id-less provider, cut after sending: must be reported unknown.
  for (const c of cut) {
    if (c.point === 'outbound:after_send' && c.callId.endsWith('slack')) {
      if (kindOf.get(c.callId) !== 'unknown_outcome') {
        slackMisreported++;
        unsettled.push(
          `${c.callId}: cut after sending, observation=${kindOf.get(c.callId) ?? 'none'}`,
        );
      }
    }
  }
  return {
    duplicateEffects,
    linearUnsettled,
    githubUnsettled,
    slackUnknown,
    slackMisreported,
    unfinishedRuns: unfinished[0]?.n ?? runs,
    unsettled,
  };
}

/** The line the campaign ends with. */
export function effectSummaryLine(r: EffectCampaignResult): string {
  return (
    `crash-effects: seed=${r.seed} runs=${r.runs} kills=${r.kills} after_record=${r.killsAfterRecord} ` +
    `after_send=${r.killsAfterSend} duplicate_effects=${r.duplicateEffects} linear_unsettled=${r.linearUnsettled} ` +
    `github_unsettled=${r.githubUnsettled} ` +
    `slack_unknown=${r.slackUnknown} slack_misreported=${r.slackMisreported} unfinished_runs=${r.unfinishedRuns}` +
    r.unsettled.map((line) => `\n  unsettled ${line}`).join('')
  );
}
