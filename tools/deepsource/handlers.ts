import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { connect, DeepSourceError, failureText, type Request } from './deepsource-client.ts';
import { deepsourceSettings, runLink, type DeepSourceSettings } from './settings.ts';
import { refused } from '../../src/tool/package-support.ts';

// The arguments were decoded against the manifest's schema before a handler runs: owners and
// repository names match their patterns, the category is one of DeepSource's, limits are bounded.
// Both tools are queries: nothing here changes anything at DeepSource.

const DEFAULT_LIMIT = 25;
/** Issues asked for per page (DeepSource's connections are Relay-style, `first`/`after`). */
const PAGE_SIZE = 50;
/** At most this many pages per call: a category filter over a huge repository stops here. */
const MAX_PAGES = 5;
/** Occurrences shown per issue (the count is the whole count). */
const SHOWN_OCCURRENCES = 3;

/** Settings and a connection for one call, or the observation that says why not. */
async function open(
  ctx: ToolContext,
  tool: string,
): Promise<
  { ok: true; settings: DeepSourceSettings; request: Request } | { ok: false; out: ToolOutput }
> {
  const outcome = deepsourceSettings(ctx.config);
  if (!outcome.ok) return { ok: false, out: refused(`${tool} cannot run: ${outcome.problem}.`) };
  return { ok: true, settings: outcome.settings, request: await connect(ctx, outcome.settings) };
}

interface Target {
  readonly owner: string;
  readonly repo: string;
  /** `owner/repo on GITHUB`, for messages. */
  readonly shown: string;
  readonly variables: { name: string; login: string; provider: string };
}

function target(args: JsonObject, settings: DeepSourceSettings): Target {
  const owner = args['owner'] as string;
  const repo = args['repo'] as string;
  return {
    owner,
    repo,
    shown: `${owner}/${repo} on ${settings.vcsProvider}`,
    variables: { name: repo, login: owner, provider: settings.vcsProvider },
  };
}

const REPOSITORY_ARGS = '$name: String!, $login: String!, $provider: VCSProvider!';
const REPOSITORY = 'repository(name: $name, login: $login, vcsProvider: $provider)';

interface Connection<Node> {
  readonly totalCount?: number | null;
  readonly pageInfo?: { readonly hasNextPage: boolean; readonly endCursor: string | null };
  readonly edges: ReadonlyArray<{ readonly node: Node | null } | null>;
}

function nodes<Node>(connection: Connection<Node> | null | undefined): Node[] {
  return (connection?.edges ?? []).flatMap((edge) => (edge?.node ? [edge.node] : []));
}

interface RepositoryIssueNode {
  readonly issue: {
    readonly shortcode: string;
    readonly title: string;
    readonly category: string;
    readonly severity: string;
    readonly analyzer: { readonly shortcode: string; readonly name: string } | null;
  };
  readonly occurrences: Connection<{ readonly path: string; readonly beginLine: number }>;
}

const ISSUES_QUERY = `query MeshDeepSourceIssues(${REPOSITORY_ARGS}, $first: Int!, $after: String, $analyzerIn: [String], $occurrences: Int!) {
  ${REPOSITORY} {
    issues(first: $first, after: $after, analyzerIn: $analyzerIn) {
      pageInfo { hasNextPage endCursor }
      edges { node {
        issue { shortcode title category severity analyzer { shortcode name } }
        occurrences(first: $occurrences) { totalCount edges { node { path beginLine } } }
      } }
    }
  }
}`;

/** Lists the repository's open issues (those in its default branch), page by page up to a cap. */
export async function listDeepsourceIssues(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const opened = await open(ctx, 'list_deepsource_issues');
  if (!opened.ok) return opened.out;
  const { settings, request } = opened;
  const t = target(args, settings);
  const limit = typeof args['limit'] === 'number' ? args['limit'] : DEFAULT_LIMIT;
  const analyzer =
    typeof args['analyzer'] === 'string' ? args['analyzer'].toLowerCase() : undefined;
  const category = typeof args['category'] === 'string' ? args['category'] : undefined;
  const found: RepositoryIssueNode[] = [];
  let after: string | undefined;
  let more = false;
  let pages = 0;
  try {
    while (found.length < limit && pages < MAX_PAGES) {
      pages += 1;
      const data = await request<{
        repository: { issues: Connection<RepositoryIssueNode> } | null;
      }>(ISSUES_QUERY, {
        ...t.variables,
        // Without a category filter a page need be no larger than what is left to find.
        first: category === undefined ? Math.min(PAGE_SIZE, limit - found.length) : PAGE_SIZE,
        ...(after === undefined ? {} : { after }),
        ...(analyzer === undefined ? {} : { analyzerIn: [analyzer] }),
        occurrences: SHOWN_OCCURRENCES,
      });
      if (!data.repository)
        return refused(failureText('the repository', `repository ${t.shown}`, notFound(t)));
      const page = nodes(data.repository.issues);
      for (const node of page) {
        if (category !== undefined && node.issue.category !== category) continue;
        if (found.length < limit) found.push(node);
        else more = true;
      }
      const info = data.repository.issues.pageInfo;
      more ||= info?.hasNextPage === true;
      if (!info?.hasNextPage || !info.endCursor) {
        if (found.length < limit) more = false;
        break;
      }
      after = info.endCursor;
    }
  } catch (error) {
    return refused(failureText(`listing the issues of ${t.shown}`, `repository ${t.shown}`, error));
  }
  const filters = [
    analyzer === undefined ? '' : ` from analyzer ${analyzer}`,
    category === undefined ? '' : ` in category ${category}`,
  ].join('');
  const issues = found.map((node) => {
    const shown = nodes(node.occurrences).map((o) => ({ path: o.path, line: o.beginLine }));
    return {
      shortcode: node.issue.shortcode,
      title: node.issue.title,
      category: node.issue.category,
      severity: node.issue.severity,
      analyzer: node.issue.analyzer?.shortcode ?? null,
      occurrences: node.occurrences.totalCount ?? shown.length,
      first_occurrences: shown,
    };
  });
  const lines = issues.map((i) => {
    const where = i.first_occurrences.map((o) => `${o.path}:${o.line}`).join(', ');
    const rest = i.occurrences - i.first_occurrences.length;
    return (
      `${i.shortcode} [${i.category}, ${i.severity}] ${i.title} (${i.analyzer ?? 'unknown analyzer'}): ` +
      `${i.occurrences} occurrence${i.occurrences === 1 ? '' : 's'}` +
      (where === '' ? '' : ` — ${where}${rest > 0 ? ` and ${rest} more` : ''}`)
    );
  });
  const tail = more
    ? found.length >= limit
      ? `\nMore issues may match; raise \`limit\` (up to 100) or narrow by analyzer or category.`
      : `\nSearched the first ${pages * PAGE_SIZE} issues of the repository (the cap per call); narrow by analyzer to see others.`
    : '';
  return {
    text:
      (issues.length === 0
        ? `DeepSource reports no open issues${filters} in ${t.owner}/${t.repo}.`
        : `Open DeepSource issues${filters} in ${t.owner}/${t.repo}:\n${lines.join('\n')}`) + tail,
    data: { repository: `${t.owner}/${t.repo}`, issues, more },
  };
}

function notFound(t: Target): DeepSourceError {
  return new DeepSourceError('not_found', `no repository ${t.owner}/${t.repo}`);
}

interface Summary {
  readonly occurrencesIntroduced: number | null;
  readonly occurrencesResolved: number | null;
  readonly occurrencesSuppressed: number | null;
}

interface RunNode {
  readonly runUid: string;
  readonly commitOid: string | null;
  readonly branchName: string | null;
  readonly status: string;
  readonly summary: Summary | null;
  readonly checks: Connection<{
    readonly status: string;
    readonly analyzer: { readonly shortcode: string; readonly name: string } | null;
    readonly summary: Summary | null;
  }>;
}

const SUMMARY = 'summary { occurrencesIntroduced occurrencesResolved occurrencesSuppressed }';
const RUN_FIELDS = `runUid commitOid branchName status ${SUMMARY} checks { edges { node { status analyzer { shortcode name } ${SUMMARY} } } }`;

const PULL_REQUEST_QUERY = `query MeshDeepSourcePullRequest(${REPOSITORY_ARGS}, $number: Int!) {
  ${REPOSITORY} { pullRequest(number: $number) { number branch } }
}`;
const BRANCH_RUN_QUERY = `query MeshDeepSourceBranchRun(${REPOSITORY_ARGS}, $branch: String!) {
  ${REPOSITORY} { analysisRuns(first: 1, branch: $branch) { edges { node { ${RUN_FIELDS} } } } }
}`;
const COMMIT_RUN_QUERY = `query MeshDeepSourceCommitRun($commitOid: String!) {
  run(commitOid: $commitOid) { ${RUN_FIELDS} repository { name } }
}`;

/** The analysis run of a pull request (its latest) or of a commit, with each analyzer's check. */
export async function getDeepsourcePrChecks(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const number = typeof args['pull_request'] === 'number' ? args['pull_request'] : undefined;
  const commit = typeof args['commit'] === 'string' ? args['commit'].toLowerCase() : undefined;
  if ((number === undefined) === (commit === undefined))
    return refused(
      'get_deepsource_pr_checks needs exactly one of `pull_request` (the number) and `commit` (the full sha).',
    );
  const opened = await open(ctx, 'get_deepsource_pr_checks');
  if (!opened.ok) return opened.out;
  const { settings, request } = opened;
  const t = target(args, settings);
  const subject = number === undefined ? `commit ${commit}` : `pull request #${number}`;
  let run: RunNode | undefined;
  try {
    if (number !== undefined) {
      const pr = await request<{
        repository: { pullRequest: { number: number; branch: string } | null } | null;
      }>(PULL_REQUEST_QUERY, { ...t.variables, number });
      if (!pr.repository)
        return refused(failureText('the repository', `repository ${t.shown}`, notFound(t)));
      const branch = pr.repository.pullRequest?.branch;
      if (!branch)
        return refused(
          `DeepSource has no pull request #${number} in ${t.owner}/${t.repo} (it has not analyzed one by that number).`,
        );
      const runs = await request<{
        repository: { analysisRuns: Connection<RunNode> } | null;
      }>(BRANCH_RUN_QUERY, { ...t.variables, branch });
      run = nodes(runs.repository?.analysisRuns)[0];
      if (!run)
        return {
          text: `DeepSource has no analysis run yet for pull request #${number} of ${t.owner}/${t.repo} (branch ${branch}).`,
          data: { repository: `${t.owner}/${t.repo}`, pull_request: number, run: null },
        };
    } else {
      const data = await request<{ run: (RunNode & { repository: { name: string } }) | null }>(
        COMMIT_RUN_QUERY,
        { commitOid: commit },
      );
      if (!data.run)
        return refused(
          `DeepSource has no analysis run for commit ${commit} in ${t.owner}/${t.repo}.`,
        );
      if (data.run.repository.name.toLowerCase() !== t.repo.toLowerCase())
        return refused(
          `DeepSource's analysis run for commit ${commit} belongs to repository ${data.run.repository.name}, not ${t.repo}.`,
        );
      run = data.run;
    }
  } catch (error) {
    // DeepSource names the model that is missing: "PullRequest matching query does not exist."
    const missing = error instanceof DeepSourceError ? error.message : '';
    const where = /pull ?request/i.test(missing)
      ? `pull request #${number ?? ''} in ${t.owner}/${t.repo}`
      : /run/i.test(missing)
        ? `analysis run for ${subject} in ${t.owner}/${t.repo}`
        : `repository ${t.shown}`;
    return refused(failureText(`reading the checks of ${subject} in ${t.shown}`, where, error));
  }
  const url = runLink(settings, t.owner, t.repo, run.runUid);
  const checks = nodes(run.checks).map((check) => {
    const shortcode = check.analyzer?.shortcode ?? 'unknown';
    return {
      analyzer: shortcode,
      name: check.analyzer?.name ?? null,
      status: check.status,
      introduced: check.summary?.occurrencesIntroduced ?? 0,
      resolved: check.summary?.occurrencesResolved ?? 0,
      suppressed: check.summary?.occurrencesSuppressed ?? 0,
      url: url === undefined ? null : `${url}${encodeURIComponent(shortcode)}/`,
    };
  });
  const counts = (s: { introduced: number; resolved: number }) =>
    `${s.introduced} introduced, ${s.resolved} resolved`;
  const total = {
    introduced: run.summary?.occurrencesIntroduced ?? 0,
    resolved: run.summary?.occurrencesResolved ?? 0,
    suppressed: run.summary?.occurrencesSuppressed ?? 0,
  };
  const head =
    `DeepSource analysis of ${subject} in ${t.owner}/${t.repo} ` +
    `(commit ${run.commitOid?.slice(0, 12) ?? 'unknown'} on ${run.branchName ?? 'unknown branch'}): ` +
    `${run.status}; occurrences ${counts(total)}.${url === undefined ? '' : ` ${url}`}`;
  const lines = checks.map(
    (c) =>
      `- ${c.analyzer}${c.name ? ` (${c.name})` : ''}: ${c.status}; ${counts(c)}${c.url ? ` ${c.url}` : ''}`,
  );
  return {
    text: [head, ...(lines.length === 0 ? ['No analyzer checks in this run.'] : lines)].join('\n'),
    data: {
      repository: `${t.owner}/${t.repo}`,
      ...(number === undefined ? { commit: commit ?? null } : { pull_request: number }),
      run: {
        run_uid: run.runUid,
        commit: run.commitOid,
        branch: run.branchName,
        status: run.status,
        ...total,
        url: url ?? null,
      },
      checks,
    },
  };
}
