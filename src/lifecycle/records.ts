import type { JsonObject } from '../model/json.ts';

/**
 * An install's state: `disabled → enabling → enabled | error`, `enabled → disabling → disabled |
 * error`. A package's tools are offered to the agent only while its install is `enabled`.
 */
export type InstallState = 'disabled' | 'enabling' | 'enabled' | 'disabling' | 'error';

/** What an operator (or Mesh) asks of an install. */
export type LifecycleAction =
  'enable' | 'disable' | 'health' | 'rotate' | 'upgrade' | 'reconfigure' | 'abandon';

/** Where a transition is: `running` until it ends (a crash leaves it running, to be resumed). */
export type TransitionOutcome = 'running' | 'succeeded' | 'failed';

/** One agent's install of one package. */
export interface InstallRecord {
  readonly id: string;
  readonly agentId: string;
  readonly packageId: string;
  readonly state: InstallState;
  /** The package the install was last moved with: what its grants and audit records pin to. */
  readonly packageVersion: string;
  readonly packageDigest: string;
  /** What the package's hooks keep for the install (a webhook's id). */
  readonly hookState: JsonObject;
  /**
   * When the sweep first saw the install pinned to another build of its package than the one
   * running; null when it is not drifted (or not yet seen).
   */
  readonly driftSeenAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One attributed attempt to move an install, pinned to the versions in force when it began. */
export interface TransitionRecord {
  readonly id: string;
  readonly installId: string;
  /** 1, 2, 3… per install: the serialized history. */
  readonly seq: number;
  readonly action: LifecycleAction;
  /** Who asked: `operator:<name>`, `mesh` (a resumed or scheduled transition), … */
  readonly requestedBy: string;
  readonly fromState: InstallState;
  /** The state a success ends in. */
  readonly toState: InstallState;
  readonly outcome: TransitionOutcome;
  readonly packageVersion: string;
  readonly packageDigest: string;
  /** sha256 of the install's config values when the transition began. */
  readonly configVersion: string;
  /** The install's secrets when it began: `kind@version` for each, comma-separated. */
  readonly secretVersion: string;
  /** sha256 of (install, transition, config version, secret version): what every attempt sends. */
  readonly idempotencyKey: string;
  readonly attempts: number;
  readonly error: string | null;
  /** What it did besides its hook (a disable's drained or cancelled calls). */
  readonly detail: string | null;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
}

/** A failed transition left for an operator: retried (the hook is run again) or abandoned. */
export interface CompensationRecord {
  readonly id: string;
  readonly installId: string;
  readonly transitionId: string;
  readonly action: LifecycleAction;
  readonly reason: string;
  readonly state: 'open' | 'retried' | 'abandoned';
  readonly resolvedBy: string | null;
  readonly resolvedAt: Date | null;
  readonly createdAt: Date;
}

/** A transition about to begin, as the executor records it. */
export type NewTransition = Pick<
  TransitionRecord,
  | 'id'
  | 'installId'
  | 'action'
  | 'requestedBy'
  | 'fromState'
  | 'toState'
  | 'packageVersion'
  | 'packageDigest'
  | 'configVersion'
  | 'secretVersion'
  | 'idempotencyKey'
>;

/**
 * The lifecycle's storage; src/store implements it. Each write is durable when it resolves, so a
 * transition's row says what was true when a process stopped.
 */
export interface LifecycleStore {
  /**
   * Runs `fn` holding the install's lock (agent, package): across processes and replicas, one
   * transition of an install runs at a time. With `wait: false`, undefined when another holds it.
   */
  serialize<T>(
    agentId: string,
    packageId: string,
    fn: () => Promise<T>,
    options?: { readonly wait?: boolean },
  ): Promise<T | undefined>;
  /**
   * The install, created in `initial` (pinned to this version and digest) when there is none: a
   * package with an `on_enable` hook starts disabled, one without starts enabled (built-in tools
   * are on by default, with per-agent opt-outs).
   */
  install(
    agentId: string,
    packageId: string,
    pin: { readonly version: string; readonly digest: string },
    initial: InstallState,
  ): Promise<InstallRecord>;
  findInstall(agentId: string, packageId: string): Promise<InstallRecord | undefined>;
  /** The install's transition still `running` (a crash cut it), if any. */
  unfinished(installId: string): Promise<TransitionRecord | undefined>;
  /** Records the transition (next seq, `running`) and moves the install to its in-between state. */
  begin(transition: NewTransition, installState: InstallState): Promise<TransitionRecord>;
  /** Counts an attempt on the transition (before the hook runs), with the last error if any. */
  attempt(transitionId: string): Promise<TransitionRecord>;
  /** A retryable outcome, recorded while the transition goes on. */
  noteRetry(transitionId: string, reason: string): Promise<void>;
  /** Records what the transition did besides its hook. */
  noteDetail(transitionId: string, detail: string): Promise<void>;
  /** How many of the agent's calls of the package's tools are running now (in running runs). */
  inFlightCalls(agentId: string, packageId: string): Promise<number>;
  /**
   * Takes back the lease of every run holding such a call: its holder stops (the call is cut, as
   * by a crash) and the run resumes under a new holder, without the package. Returns how many.
   */
  cancelInFlight(agentId: string, packageId: string): Promise<number>;
  /**
   * Ends the transition and moves the install, in one transaction; a failure also opens a
   * compensation task. `hookState` replaces what the hooks keep, when given.
   */
  finish(
    transition: TransitionRecord,
    end: {
      readonly outcome: 'succeeded' | 'failed';
      readonly installState: InstallState;
      readonly error?: string;
      readonly hookState?: JsonObject;
      /** Whether a failure opens a compensation task (default yes). */
      readonly compensate?: boolean;
    },
  ): Promise<void>;
  /** Marks an install's open compensation tasks resolved (retried or abandoned) by `actor`. */
  resolveCompensations(
    installId: string,
    state: 'retried' | 'abandoned',
    actor: string,
  ): Promise<number>;
  /** The install's transitions, oldest first. */
  history(installId: string): Promise<readonly TransitionRecord[]>;
  compensations(installId: string): Promise<readonly CompensationRecord[]>;
  listInstalls(agentId: string): Promise<readonly InstallRecord[]>;
  /** Every enabled install: what the upgrade sweep compares with the running packages. */
  enabledInstalls(): Promise<readonly InstallRecord[]>;
  /**
   * Records which installs drifted (by id): those not stamped yet are stamped now, and any other
   * stamp is cleared. Returns how many were newly stamped.
   */
  recordDrift(drifted: readonly string[]): Promise<number>;
  /** Installs with a transition still running: what a resume sweep looks at. */
  withUnfinished(): Promise<readonly InstallRecord[]>;
}
