import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolAttachment, ToolOutput } from '../../src/tool/definition.ts';
import { hasCode, InvalidToolInputError } from '../../src/tool/errors.ts';
import { excerpt } from '../../src/tool/excerpt.ts';
import {
  WORKSPACES,
  WorkspaceFileError,
  WorkspaceUnavailableError,
  type WorkspaceSession,
} from '../../src/tool/workspace.ts';

/** Bytes of each stream shown to the model; the rest is in the output's artifact. */
const STREAM_LIMIT = 6 * 1024;
/** Largest file read whole; a text file is shown clamped like a stream. */
const READ_LIMIT = 4 * 1024 * 1024;
const TEXT_LIMIT = 12 * 1024;
const DEFAULT_TIMEOUT_S = 120;

/**
 * The layer's degraded states (no backend, backend down, budget spent) and a path the workspace
 * refuses are observations the model can act on or report, never a failed turn.
 */
async function withWorkspace(
  ctx: ToolContext,
  fn: (ws: WorkspaceSession) => Promise<ToolOutput>,
): Promise<ToolOutput> {
  try {
    return await fn(await ctx.services.get(WORKSPACES).forCall(ctx));
  } catch (error) {
    if (
      hasCode(error, WorkspaceUnavailableError.code) ||
      hasCode(error, 'workspace_backend_unavailable')
    )
      return { text: `The workspace is unavailable: ${error.message}`, isError: true };
    if (hasCode(error, WorkspaceFileError.code)) throw new InvalidToolInputError(error.message);
    throw error;
  }
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('utf8');
}

/** A stream for the model: whole when short, else head and tail naming the artifact. */
function shown(text: string, artifactId: string): { text: string; clamped: boolean } {
  if (Buffer.byteLength(text) <= STREAM_LIMIT) return { text, clamped: false };
  return { text: excerpt(text, STREAM_LIMIT, artifactId).text, clamped: true };
}

/** Runs a command; its exit code and both streams are the result, whatever they are. */
export async function workspaceExec(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const timeoutS =
    typeof args['timeout_seconds'] === 'number' ? args['timeout_seconds'] : DEFAULT_TIMEOUT_S;
  return withWorkspace(ctx, async (ws) => {
    const result = await ws.exec({
      command: args['command'] as string,
      ...(typeof args['cwd'] === 'string' ? { cwd: args['cwd'] } : {}),
      timeoutMs: timeoutS * 1000,
    });
    const stdout = utf8(result.stdout);
    const stderr = utf8(result.stderr);
    const artifactId = randomUUID();
    const out = shown(stdout, artifactId);
    const err = shown(stderr, artifactId);
    const status = result.timedOut
      ? `killed: the command ran past its ${timeoutS} s timeout`
      : result.exitCode === null
        ? 'killed by a signal'
        : `exit code ${result.exitCode}`;
    const lines = [status];
    if (result.egressRefused.length > 0) {
      lines.push(
        `egress refused: ${[...new Set(result.egressRefused)].join(', ')} (not on this agent's allowlist; an operator allows a host with \`mesh workspaces grant --allow-host <host>\`)`,
      );
    }
    lines.push(`--- stdout (${result.stdout.byteLength} bytes) ---`, out.text);
    lines.push(`--- stderr (${result.stderr.byteLength} bytes) ---`, err.text);
    const attachments: ToolAttachment[] =
      out.clamped || err.clamped
        ? [
            {
              id: artifactId,
              kind: 'resource',
              mediaType: 'text/plain',
              content: Buffer.from(`--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}\n`),
            },
          ]
        : [];
    return {
      text: lines.join('\n'),
      data: {
        exit_code: result.exitCode,
        timed_out: result.timedOut,
        compute_ms: result.computeMs,
        stdout_bytes: result.stdout.byteLength,
        stderr_bytes: result.stderr.byteLength,
        egress_refused: [...new Set(result.egressRefused)],
      },
      usage: { computeMs: result.computeMs },
      ...(attachments.length > 0 ? { attachments } : {}),
    };
  });
}

/** Whether bytes are text worth showing: valid UTF-8 without NUL. */
function isText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Reads a file: text as text (clamped), anything else as an artifact. */
export async function workspaceReadFile(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const path = args['path'] as string;
  return withWorkspace(ctx, async (ws): Promise<ToolOutput> => {
    const bytes = await ws.readFile(path, READ_LIMIT);
    const id = randomUUID();
    if (!isText(bytes)) {
      return {
        text: `${path} is a binary file of ${bytes.byteLength} bytes, stored as artifact ${id}.`,
        data: { path, size_bytes: bytes.byteLength, binary: true },
        attachments: [
          { id, kind: 'resource', mediaType: 'application/octet-stream', content: bytes },
        ],
      };
    }
    const text = utf8(bytes);
    if (Buffer.byteLength(text) <= TEXT_LIMIT)
      return { text, data: { path, size_bytes: bytes.byteLength } };
    return {
      text: excerpt(text, TEXT_LIMIT, id).text,
      data: { path, size_bytes: bytes.byteLength, clamped: true },
      attachments: [{ id, kind: 'resource', mediaType: 'text/plain', content: bytes }],
    };
  });
}

/** Writes a file, making its folders. */
export async function workspaceWriteFile(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const path = args['path'] as string;
  const encoding = args['encoding'] === 'base64' ? 'base64' : 'utf8';
  const content = args['content'] as string;
  if (encoding === 'base64' && !/^[A-Za-z0-9+/]*={0,2}$/.test(content))
    throw new InvalidToolInputError('field `content` is not valid base64 (encoding is base64)');
  const bytes = Buffer.from(content, encoding);
  return withWorkspace(ctx, async (ws) => {
    await ws.writeFile(path, bytes);
    return {
      text: `Wrote ${bytes.byteLength} bytes to ${path}.`,
      data: { path, size_bytes: bytes.byteLength },
    };
  });
}
