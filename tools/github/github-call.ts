import type { Octokit } from '@octokit/rest';
import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { InvalidToolInputError } from '../../src/tool/errors.ts';
import type { EffectKey } from '../../src/tool/outbound.ts';
import { refused } from '../../src/tool/package-support.ts';
import { createRedactor } from '../../src/tool/redaction.ts';
import { connect } from './github-client.ts';
import { githubSettings, type GitHubSettings } from './settings.ts';

// What the package's API tools share: the repository argument, one call's settings and
// connection, GitHub's pagination, and the marker that carries our key in what we write.
//
// GitHub's write endpoints take no idempotency key. Each body we write ends with a hidden marker
// carrying our key (`<!-- mesh-outbound:KEY -->`, an HTML comment GitHub does not render), and
// each effect's lookup reads back what the account wrote recently, looking for that marker.

/** The hidden marker that carries our key in a body GitHub stores. */
export function marker(key: EffectKey): string {
  return `<!-- mesh-outbound:${key.key} -->`;
}

export function withMarker(body: string | undefined, key: EffectKey): string {
  return body === undefined || body === '' ? marker(key) : `${body}\n\n${marker(key)}`;
}

export function hasMarker(body: string | null | undefined, key: EffectKey): boolean {
  return typeof body === 'string' && body.includes(marker(key));
}

export function splitRepo(repo: string): { owner: string; name: string } {
  const [owner = '', name = ''] = repo.split('/');
  if (name === '.' || name === '..' || name.endsWith('.git'))
    throw new InvalidToolInputError(
      'field `repo` must be `owner/name`, the name without `.git` and not `.` or `..`',
    );
  return { owner, name };
}

export interface Opened {
  readonly settings: GitHubSettings;
  readonly octokit: Octokit;
  readonly repo: string;
  readonly owner: string;
  readonly name: string;
  readonly redact: (s: string) => string;
}

/** Settings, the repository and a connection for one call, or the observation that says why not. */
export async function open(
  ctx: ToolContext,
  tool: string,
  args: JsonObject,
): Promise<{ ok: true; opened: Opened } | { ok: false; out: ToolOutput }> {
  const repo = args['repo'] as string;
  const { owner, name } = splitRepo(repo);
  const outcome = githubSettings(ctx.config);
  if (!outcome.ok) return { ok: false, out: refused(`${tool} cannot run: ${outcome.problem}.`) };
  const connected = await connect(ctx, outcome.settings, { identity: false });
  if (!connected.ok) return { ok: false, out: refused(connected.text) };
  const redactor = createRedactor([connected.connection.token]);
  return {
    ok: true,
    opened: {
      settings: outcome.settings,
      octokit: connected.connection.octokit,
      repo,
      owner,
      name,
      redact: (s) => redactor.text(s),
    },
  };
}

/** The page number a `Link` header names as `rel` (GitHub's pagination), if it names one. */
export function linkedPage(
  headers: { link?: string | undefined },
  rel: string,
): number | undefined {
  const link = headers.link ?? '';
  for (const part of link.split(',')) {
    if (!part.includes(`rel="${rel}"`)) continue;
    const page = /[?&]page=(\d+)/.exec(part)?.[1];
    if (page !== undefined) return Number(page);
  }
  return undefined;
}

/**
 * The newest entries of a list GitHub returns oldest first (an issue's comments, a pull request's
 * reviews): the last page and the one before it, found through the first page's `Link` header.
 */
export async function newest<T>(
  list: (page: number) => Promise<{ data: T[]; headers: { link?: string | undefined } }>,
): Promise<T[]> {
  const first = await list(1);
  const last = linkedPage(first.headers, 'last');
  if (last === undefined || last <= 1) return first.data;
  const pages = last === 2 ? [first] : [await list(last - 1)];
  pages.push(await list(last));
  return pages.flatMap((p) => p.data);
}
