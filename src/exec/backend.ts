import { MeshError } from '../tool/errors.ts';
import type { WorkspaceSession } from '../tool/workspace.ts';

export type { ExecRequest, ExecResult, WorkspaceSession } from '../tool/workspace.ts';
export { WorkspaceFileError } from '../tool/workspace.ts';

/**
 * The execution layer's seam: where exec-class work runs. A backend rents workspaces; a workspace
 * runs commands and holds files for exactly one run. Nothing above this file names a vendor: the
 * control plane speaks `WorkspaceBackend`, and each backend (local bubblewrap, E2B, …) implements
 * it at the edge and passes the same contract suite (test/exec/backend-contract.ts).
 */

/** What a backend can do beyond the intersection every backend has (exec, files, release). */
export interface BackendCapabilities {
  /** Output arrives while the command runs (`onOutput`), not only at its end. */
  readonly streamingExec: boolean;
  /** Files can be read and written directly (not only through a command). */
  readonly fileAccess: boolean;
  /** Egress is denied except for the allowlist given at provisioning (enforced by the backend). */
  readonly egressAllowlist: boolean;
  /** The backend can snapshot a workspace's filesystem (for layered cold starts). */
  readonly snapshots: boolean;
  /** The backend ends an idle workspace on its own after `limits.idleTimeoutMs`. */
  readonly idleTimeout: boolean;
  /** A development backend: never for production, marked so wherever an operator sees it. */
  readonly development: boolean;
}

/** Limits one workspace is provisioned with. */
export interface WorkspaceLimits {
  /** Memory ceiling for the workspace's processes, in MiB. */
  readonly memoryMb: number;
  /** Largest file a command may write, in MiB. */
  readonly fileSizeMb: number;
  /** How many processes the workspace may have at once. */
  readonly processes: number;
  /** Disk for the workspace's root, in MiB. */
  readonly diskMb: number;
  /** Disk for the workspace's /tmp, in MiB. */
  readonly tmpMb: number;
  /** The backend may end the workspace after this long without a call. */
  readonly idleTimeoutMs: number;
}

export const DEFAULT_LIMITS: WorkspaceLimits = Object.freeze({
  memoryMb: 2048,
  fileSizeMb: 512,
  processes: 256,
  diskMb: 2048,
  tmpMb: 512,
  idleTimeoutMs: 15 * 60_000,
});

/** An allowlisted destination: a host name or IP literal, and optionally one port. */
export interface EgressRule {
  readonly host: string;
  /** Absent: any port of the host. */
  readonly port?: number;
}

/** What a workspace is provisioned for. */
export interface ProvisionSpec {
  /** Mesh's id for the workspace (a UUID): names it in the backend too, where it has names. */
  readonly workspaceId: string;
  readonly runId: string;
  readonly agentId: string;
  /** The image (template) to start from; absent means the backend's default. */
  readonly image?: string;
  /** Hosts the workspace may reach; everything else is refused. */
  readonly egress: readonly EgressRule[];
  /**
   * Credentials granted to this workspace, as environment variables every command sees. Only
   * ones granted to this run's agent, and only for this workspace; never written to its files.
   */
  readonly credentials: Readonly<Record<string, string>>;
  readonly limits: WorkspaceLimits;
  readonly signal?: AbortSignal;
}

/** One rented workspace: the handler's view of it, plus what the layer needs to end it. */
export interface Workspace extends WorkspaceSession {
  readonly id: string;
  /** The backend's own id for it (a sandbox id, a directory name): how it is found to release. */
  readonly externalId: string;
  /** Ends the workspace and frees what it holds. Idempotent. */
  release(): Promise<void>;
}

/** A kind of place to run code. */
export interface WorkspaceBackend {
  /** The backend kind (`local`, `e2b`): a row's `kind`, never a tool name. */
  readonly kind: string;
  readonly capabilities: BackendCapabilities;
  provision(spec: ProvisionSpec): Promise<Workspace>;
  /**
   * Releases a workspace by its external id, from any process: the reaper's way to end a
   * workspace whose run died with the process that held it. Idempotent; a workspace already
   * gone is released.
   */
  releaseById(externalId: string): Promise<void>;
  /** Ends what this process holds of the backend (connections, proxies). */
  close(): Promise<void>;
}

/**
 * The backend cannot be reached or refused the request (down, bad credential, quota): the
 * workspace tools report it as an observation naming the fix.
 */
export class BackendUnavailableError extends MeshError {
  static readonly code = 'workspace_backend_unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(BackendUnavailableError.code, message, undefined, options);
  }
}

/** Parses `host` or `host:port` (IPv6 in brackets) into a rule; undefined when malformed. */
export function parseEgressRule(text: string): EgressRule | undefined {
  const trimmed = text.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(trimmed);
  if (!match) return undefined;
  const host = match[1]!.replace(/^\[|\]$/g, '');
  if (host.length === 0 || host.length > 253 || host.startsWith('.') || host.endsWith('.'))
    return undefined;
  if (match[2] === undefined) return { host };
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host, port };
}

/** `host` or `host:port`, the way an operator writes a rule. */
export function formatEgressRule(rule: EgressRule): string {
  const host = rule.host.includes(':') ? `[${rule.host}]` : rule.host;
  return rule.port === undefined ? host : `${host}:${rule.port}`;
}

/** Whether a destination is allowed by the rules. */
export function egressAllowed(rules: readonly EgressRule[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return rules.some((r) => r.host === h && (r.port === undefined || r.port === port));
}
