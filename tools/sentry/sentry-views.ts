import type { JsonObject } from '../../src/model/json.ts';

/**
 * The parts of Sentry's issue and event JSON the package reads, and how they are shown to the
 * model. An event's contents are the application's own data: they are excerpted and bounded.
 */

export interface SentryActor {
  readonly type: string;
  readonly id: string;
  readonly name?: string;
  readonly email?: string;
}

export interface SentryIssue {
  readonly id: string;
  readonly shortId: string;
  readonly title: string;
  readonly culprit?: string | null;
  readonly status: string;
  readonly statusDetails?: Record<string, unknown> | null;
  readonly count?: string | number;
  readonly userCount?: number;
  readonly firstSeen?: string;
  readonly lastSeen?: string;
  readonly level?: string;
  readonly permalink?: string;
  readonly project?: { readonly id: string; readonly slug: string } | null;
  readonly assignedTo?: SentryActor | null;
}

/** Whether an answer's body is an issue (the fields every view reads are there). */
export function isIssue(body: unknown): body is SentryIssue {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return (
    typeof b['id'] === 'string' &&
    typeof b['shortId'] === 'string' &&
    typeof b['title'] === 'string' &&
    typeof b['status'] === 'string'
  );
}

/** The assignee as the model reads it: `Jane (user:7)`, `backend (team:3)`, or nobody. */
export function actorText(actor: SentryActor | null | undefined): string {
  if (!actor) return 'nobody';
  return `${actor.name ?? actor.email ?? actor.id} (${actor.type}:${actor.id})`;
}

/** One line per issue: what a list or a receipt says. */
export function issueLine(issue: SentryIssue): string {
  const counts = `${String(issue.count ?? '?')} events, ${String(issue.userCount ?? '?')} users`;
  return (
    `${issue.shortId} (id ${issue.id}) ${issue.title} [${issue.status}] ${counts}; ` +
    `last seen ${issue.lastSeen ?? 'unknown'}${issue.permalink ? ` ${issue.permalink}` : ''}`
  );
}

/** An issue's fields for a tool result's data. */
export function issueData(issue: SentryIssue): JsonObject {
  return {
    id: issue.id,
    shortId: issue.shortId,
    title: issue.title,
    culprit: issue.culprit ?? null,
    status: issue.status,
    count: issue.count === undefined ? null : String(issue.count),
    userCount: issue.userCount ?? null,
    lastSeen: issue.lastSeen ?? null,
    permalink: issue.permalink ?? null,
  };
}

interface Frame {
  readonly function?: string | null;
  readonly filename?: string | null;
  readonly module?: string | null;
  readonly absPath?: string | null;
  readonly lineNo?: number | null;
  readonly colNo?: number | null;
  readonly inApp?: boolean | null;
  readonly context?: readonly (readonly [number, string])[] | null;
}

interface ExceptionValue {
  readonly type?: string | null;
  readonly value?: string | null;
  readonly stacktrace?: { readonly frames?: readonly Frame[] | null } | null;
}

interface SentryEvent {
  readonly eventID?: string;
  readonly id?: string;
  readonly title?: string;
  readonly message?: string | null;
  readonly dateCreated?: string;
  readonly platform?: string;
  readonly release?: { readonly version?: string } | null;
  readonly tags?: readonly { readonly key: string; readonly value: string }[] | null;
  readonly entries?: readonly { readonly type: string; readonly data?: unknown }[] | null;
}

const MAX_EXCEPTIONS = 3;
const MAX_FRAMES = 5;
const MAX_TAGS = 20;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** In-app frames, most recent first (Sentry lists them oldest first); others if none is in-app. */
function topFrames(frames: readonly Frame[]): Frame[] {
  const inApp = frames.filter((f) => f.inApp === true);
  return [...(inApp.length > 0 ? inApp : frames)].reverse().slice(0, MAX_FRAMES);
}

function frameLines(frame: Frame): string[] {
  const where = frame.filename ?? frame.module ?? frame.absPath ?? '?';
  const position = `${frame.lineNo ?? '?'}${frame.colNo ? `:${frame.colNo}` : ''}`;
  const line = frame.context?.find(([n]) => n === frame.lineNo)?.[1];
  return [
    `    at ${frame.function ?? '?'} (${where}:${position})${frame.inApp ? '' : ' [not in app]'}`,
    ...(line === undefined ? [] : [`      > ${clip(line.trim(), 200)}`]),
  ];
}

/** The latest event, excerpted: its message, exceptions with their top in-app frames, tags. */
export function eventExcerpt(body: unknown): { text: string; data: JsonObject } {
  const event = (typeof body === 'object' && body !== null ? body : {}) as SentryEvent;
  const entries = event.entries ?? [];
  const messageEntry = entries.find((e) => e.type === 'message')?.data as
    { formatted?: string; message?: string } | undefined;
  const message = clip(
    (event.message ?? '') || messageEntry?.formatted || messageEntry?.message || event.title || '',
    1000,
  );
  const values =
    (entries.find((e) => e.type === 'exception')?.data as { values?: ExceptionValue[] } | undefined)
      ?.values ?? [];
  // Sentry lists chained exceptions cause first; the last one is what was raised.
  const exceptions = [...values].reverse().slice(0, MAX_EXCEPTIONS);
  const tags = (event.tags ?? []).slice(0, MAX_TAGS);
  const lines = [
    `Event ${event.eventID ?? event.id ?? 'unknown'} at ${event.dateCreated ?? 'unknown time'}` +
      `${event.release?.version ? ` (release ${event.release.version})` : ''}`,
    `Message: ${message || '(none)'}`,
    ...exceptions.flatMap((e) => [
      `Exception ${e.type ?? 'Error'}: ${clip(e.value ?? '', 500)}`,
      ...topFrames(e.stacktrace?.frames ?? []).flatMap(frameLines),
    ]),
    tags.length > 0 ? `Tags: ${tags.map((t) => `${t.key}=${clip(t.value, 100)}`).join(', ')}` : '',
  ].filter((line) => line !== '');
  return {
    text: lines.join('\n'),
    data: {
      eventID: event.eventID ?? event.id ?? null,
      dateCreated: event.dateCreated ?? null,
      message,
      exceptions: exceptions.map((e) => ({
        type: e.type ?? null,
        value: clip(e.value ?? '', 500),
        frames: topFrames(e.stacktrace?.frames ?? []).map((f) => ({
          function: f.function ?? null,
          filename: f.filename ?? f.module ?? f.absPath ?? null,
          lineNo: f.lineNo ?? null,
          inApp: f.inApp === true,
        })),
      })),
      tags: Object.fromEntries(tags.map((t) => [t.key, clip(t.value, 100)])),
    },
  };
}
