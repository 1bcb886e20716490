import { AGENT_FIELD, PACKAGE_FIELD } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';
import { MeshError } from '../../tool/errors.ts';
import type { AutoUpgradeAnswer } from './drift.ts';
import type { InstallAnswer } from './installs.ts';

/*
 * Package installs as operations: enable, disable, health-check and rotate an agent's install
 * through the lifecycle executor, show one with its transition history and compensation tasks,
 * and settle a failed one (retry or abandon).
 */

const INSTALL_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['agent', 'package'],
  properties: { agent: AGENT_FIELD, package: PACKAGE_FIELD },
} as const;

/** The install's line, and the last transition's when there is one. */
function installLines(out: InstallAnswer, input: Readonly<Record<string, unknown>>): string[] {
  const last = out.transitions.at(-1);
  const open = out.compensations.filter((c) => c.state === 'open');
  return [
    `${out.package} is ${out.state === 'error' ? 'in error' : out.state} for ${String(input['agent'])}${out.offered ? '' : ' (not offered)'}.`,
    ...driftLines(out, String(input['agent'])),
    ...(last
      ? [
          `  transition ${last.seq}: ${last.action} ${last.from} → ${last.to} ${last.outcome} after ${last.attempts} attempt(s) by ${last.requested_by}${last.error ? `: ${last.error}` : ''}`,
        ]
      : []),
    ...open.map(
      (c) =>
        `  compensation task (${c.action}): ${c.reason}; settle it: mesh packages compensate ${out.package} --agent ${String(input['agent'])} --how retry|abandon`,
    ),
  ];
}

/** An install Mesh was upgraded under: what it is pinned to, what runs, and the way to move it. */
export function driftLines(out: InstallAnswer, agent: string): string[] {
  if (!out.drift) return [];
  return [
    `  drifted: pinned to ${out.pinned?.version ?? '?'}, running ${out.drift.running_version}${out.drift.seen_at ? ` (seen ${out.drift.seen_at})` : ''}; upgrade it (runs on_enable): mesh packages upgrade ${out.package} --agent ${agent}`,
  ];
}

const ERRORS = ['agent_not_found', 'package_not_found'] as const;

/**
 * A transition that failed is a failure on every face, not a 200 with `state: error` in its
 * body: the API answers 502 `transition_failed` and the CLI exits non-zero, naming the hook's
 * reason and how to settle the task. The transition stays on record (the executor wrote it), and
 * `packages install` shows it.
 */
function refuseFailed(
  out: InstallAnswer,
  transition:
    | { readonly action: string; readonly outcome: string; readonly error: string | null }
    | undefined,
  agent: string,
): InstallAnswer {
  if (transition?.outcome !== 'failed') return out;
  const task = out.compensations.some((c) => c.state === 'open')
    ? `; the install is in error with a compensation task: settle it with mesh packages compensate ${out.package} --agent ${agent} --how retry|abandon`
    : '';
  throw new MeshError(
    'transition_failed',
    `${transition.action} transition of ${out.package} for ${agent} failed: ${transition.error ?? 'its hook failed'}${task}`,
    { package: out.package, state: out.state },
  );
}

/** An operation that runs one lifecycle action on an install. */
function actionOperation<const A extends 'enable' | 'disable' | 'health' | 'rotate' | 'upgrade'>(
  action: A,
  summary: string,
  verb: string,
) {
  return defineOperation({
    name: `packages.${verb}`,
    summary,
    tag: 'packages',
    input: INSTALL_INPUT,
    errors:
      action === 'health' || action === 'rotate'
        ? [...ERRORS, 'install_not_enabled', 'transition_failed']
        : [...ERRORS, 'transition_failed'],
    http: { method: 'POST', path: `/api/agents/{agent}/packages/{package}/${verb}` },
    cli: { command: ['packages', verb], positionals: ['package'], print: installLines },
    async run(mesh, input, caller): Promise<InstallAnswer> {
      const [{ requireAgent }, { requirePackage }, { lifecycleOf, installAnswer }] =
        await Promise.all([
          import('../agents/agents.ts'),
          import('./packages.ts'),
          import('./installs.ts'),
        ]);
      const agent = await requireAgent(mesh, input.agent);
      const pkg = requirePackage(mesh, input.package);
      const result = await lifecycleOf(mesh).request({
        agentId: agent.id,
        packageId: pkg.manifest.package.id,
        action,
        actor: caller.actor,
      });
      return refuseFailed(
        await installAnswer(mesh, agent.id, pkg, result.install),
        result.transition,
        agent.name,
      );
    },
  });
}

export const enablePackageOperation = actionOperation(
  'enable',
  'Enable a package for an agent: runs its on_enable hook through the lifecycle executor; its tools are offered once it is enabled',
  'enable',
);
export const disablePackageOperation = actionOperation(
  'disable',
  'Disable a package for an agent: its tools stop being offered at once, then its on_disable hook tears down what enabling made',
  'disable',
);
export const checkPackageOperation = actionOperation(
  'health',
  "Run an enabled install's health check; a failure parks it in error with a compensation task",
  'check',
);
export const rotatePackageOperation = actionOperation(
  'rotate',
  "Re-run an enabled install's on_secret_capture against its newest secret version, before it is used",
  'rotate',
);

export const upgradePackageOperation = actionOperation(
  'upgrade',
  "Move an enabled install to the package version now running: its on_enable runs again and the install is pinned to the new version and digest (mesh serve records and shows drifted installs, and upgrades them on its own only under an operator's standing instruction: packages set-auto-upgrade)",
  'upgrade',
);

export const showInstallOperation = defineOperation({
  name: 'packages.install',
  summary:
    "An agent's install of a package: its state, the package version and digest it is pinned to, its transition history and its compensation tasks",
  tag: 'packages',
  input: INSTALL_INPUT,
  errors: ERRORS,
  http: { method: 'GET', path: '/api/agents/{agent}/packages/{package}/install' },
  cli: {
    command: ['packages', 'install'],
    positionals: ['package'],
    print: (out: InstallAnswer, input) => [
      ...installLines(out, input).slice(0, 1),
      `  pinned: ${out.pinned ? `${out.pinned.version} ${out.pinned.digest}` : 'never installed'}`,
      ...out.transitions.map(
        (t) =>
          `  ${t.seq}. ${t.created_at} ${t.action} ${t.from} → ${t.to} ${t.outcome} (${t.attempts} attempt(s), by ${t.requested_by}, secrets ${t.secret_version})${t.detail ? `; ${t.detail}` : ''}${t.error ? `: ${t.error}` : ''}`,
      ),
      ...out.compensations.map(
        (c) =>
          `  compensation (${c.action}) ${c.state}${c.resolved_by ? ` by ${c.resolved_by}` : ''}: ${c.reason}`,
      ),
    ],
  },
  async run(mesh, input): Promise<InstallAnswer> {
    const [{ requireAgent }, { requirePackage }, { installAnswer }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./packages.ts'),
      import('./installs.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    return installAnswer(mesh, agent.id, requirePackage(mesh, input.package));
  },
});

export const compensateOperation = defineOperation({
  name: 'packages.compensate',
  summary:
    "Settle an install parked in error: retry runs the failed action's hook again, abandon accepts the provider's state and disables the install",
  tag: 'packages',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'package', 'how'],
    properties: {
      agent: AGENT_FIELD,
      package: PACKAGE_FIELD,
      how: { enum: ['retry', 'abandon'], description: 'retry the hook, or abandon the task' },
    },
  },
  errors: [...ERRORS, 'no_compensation', 'transition_failed'],
  http: { method: 'POST', path: '/api/agents/{agent}/packages/{package}/compensate' },
  cli: { command: ['packages', 'compensate'], positionals: ['package'], print: installLines },
  async run(mesh, input, caller): Promise<InstallAnswer> {
    const [{ requireAgent }, { requirePackage }, { lifecycleOf, installAnswer }] =
      await Promise.all([
        import('../agents/agents.ts'),
        import('./packages.ts'),
        import('./installs.ts'),
      ]);
    const agent = await requireAgent(mesh, input.agent);
    const pkg = requirePackage(mesh, input.package);
    const result = await lifecycleOf(mesh).compensate(
      agent.id,
      pkg.manifest.package.id,
      input.how,
      caller.actor,
    );
    return refuseFailed(
      await installAnswer(mesh, agent.id, pkg, result.install),
      result.transition,
      agent.name,
    );
  },
});

const AUTO_UPGRADE_PATH = '/api/auto-upgrade';

/** The standing instruction's line: on or off, and whose word it is. */
function autoUpgradeLines(out: AutoUpgradeAnswer): string[] {
  const whose = out.set_by ? ` (set by ${out.set_by} at ${out.set_at ?? '?'})` : '';
  return [
    out.enabled
      ? `Drifted installs are upgraded by mesh serve on its own, on this standing instruction${whose}.`
      : `Drifted installs are recorded and shown, and upgraded only by an operator: mesh packages upgrade${whose}.`,
  ];
}

export const autoUpgradeOperation = defineOperation({
  name: 'packages.auto_upgrade',
  summary:
    'Whether mesh serve upgrades installs Mesh was upgraded under on its own (running their on_enable), and on whose standing instruction; off unless an operator turned it on',
  tag: 'packages',
  input: { type: 'object', additionalProperties: false, required: [], properties: {} },
  errors: [],
  http: { method: 'GET', path: AUTO_UPGRADE_PATH },
  cli: { command: ['packages', 'auto-upgrade'], print: autoUpgradeLines },
  async run(mesh): Promise<AutoUpgradeAnswer> {
    const { autoUpgrade } = await import('./drift.ts');
    return autoUpgrade(mesh);
  },
});

export const setAutoUpgradeOperation = defineOperation({
  name: 'packages.set_auto_upgrade',
  summary:
    "Give or withdraw the standing instruction to upgrade drifted installs on their own: each such upgrade runs the package's on_enable and is attributed to the operator who gave it",
  tag: 'packages',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['enabled'],
    properties: {
      enabled: { type: 'boolean', description: 'upgrade drifted installs without asking' },
    },
  },
  errors: [],
  http: { method: 'PUT', path: AUTO_UPGRADE_PATH },
  cli: { command: ['packages', 'set-auto-upgrade'], print: autoUpgradeLines },
  async run(mesh, input, caller): Promise<AutoUpgradeAnswer> {
    const { setAutoUpgrade } = await import('./drift.ts');
    return setAutoUpgrade(mesh, input.enabled, caller.actor);
  },
});

export const installOperations = [
  enablePackageOperation,
  disablePackageOperation,
  checkPackageOperation,
  rotatePackageOperation,
  upgradePackageOperation,
  showInstallOperation,
  compensateOperation,
  autoUpgradeOperation,
  setAutoUpgradeOperation,
] as const;
