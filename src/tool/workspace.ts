import { serviceKey, type ToolContext } from './context.ts';
import { MeshError } from './errors.ts';

/**
 * What a workspace-class handler sees of the run's workspace: run a command, read and write
 * files, grant a credential. The execution layer (src/exec) rents the workspace from whichever
 * backend the agent was granted; a handler never learns which.
 */

/** One command to run. */
export interface ExecRequest {
  /** A shell command line, run by `/bin/sh -c` in the workspace. */
  readonly command: string;
  /** Working directory, relative to the workspace root (or absolute inside it). */
  readonly cwd?: string;
  /** The deadline: the command is killed when it runs longer. */
  readonly timeoutMs: number;
  /** Extra environment for this command only (never credentials: those are granted). */
  readonly env?: Readonly<Record<string, string>>;
  /** Output as it arrives (where the backend streams); the result holds all of it anyway. */
  readonly onOutput?: (stream: 'stdout' | 'stderr', chunk: Uint8Array) => void;
  readonly signal?: AbortSignal;
}

/** What a command came to. A non-zero exit is a result, not an error. */
export interface ExecResult {
  /** The exit code; null when the command was killed (deadline, signal). */
  readonly exitCode: number | null;
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
  /** The command ran past its deadline and was killed. */
  readonly timedOut: boolean;
  /** Compute the backend metered for this command, in milliseconds. */
  readonly computeMs: number;
  /** Destinations the workspace tried to reach during the command and was refused. */
  readonly egressRefused: readonly string[];
}

/** The run's workspace, as a handler uses it. */
export interface WorkspaceSession {
  /** The root relative paths resolve against, as commands see it (e.g. `/workspace`). */
  readonly root: string;
  exec(request: ExecRequest): Promise<ExecResult>;
  /** Reads a file inside the workspace root; `WorkspaceFileError` when it cannot. */
  readFile(path: string, maxBytes: number): Promise<Uint8Array>;
  /** Writes a file inside the workspace root, making its parent folders. */
  writeFile(path: string, content: Uint8Array): Promise<void>;
  /** Adds credentials (environment variables) for the commands that follow. */
  grant(credentials: Readonly<Record<string, string>>): Promise<void>;
}

/** Hands a call the workspace of its run, provisioned on the run's first workspace call. */
export interface Workspaces {
  forCall(ctx: ToolContext): Promise<WorkspaceSession>;
}

/** The service workspace-class tools declare as `service:mesh.workspace`. */
export const WORKSPACES = serviceKey<Workspaces>('mesh.workspace');

/**
 * Why the run cannot have a workspace now: no backend granted, the backend is down or refused,
 * the run's compute budget is spent. Handlers turn it into an observation that names the fix.
 */
export class WorkspaceUnavailableError extends MeshError {
  static readonly code = 'workspace_unavailable';
  constructor(
    readonly reason: 'no_backend' | 'backend_down' | 'compute_exhausted' | 'development_only',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(WorkspaceUnavailableError.code, message, { reason }, options);
  }
}

/** A path that leaves the workspace, does not exist, is not a file, or is too large. */
export class WorkspaceFileError extends MeshError {
  static readonly code = 'workspace_file';
  constructor(
    readonly reason: 'outside_root' | 'not_found' | 'not_a_file' | 'too_large' | 'io',
    message: string,
  ) {
    super(WorkspaceFileError.code, message, { reason });
  }
}
