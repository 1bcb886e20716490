import { lifecycleStore } from '../../store/lifecycle.ts';
import {
  findStandingInstruction,
  setStandingInstruction,
  type StandingInstruction,
} from '../../store/standing-instructions.ts';
import type { Mesh } from '../mesh.ts';
import { lifecycleOf } from './installs.ts';

/*
 * Installs left behind by an upgrade of Mesh: an enabled install pinned to another build of its
 * package than the one running has drifted. Moving it runs the package's on_enable, and a hook runs
 * only after an operator's action (the seed's lifecycle): so the sweep records and shows drift, and
 * upgrades only when an operator says so — once (`mesh packages upgrade`), or as a standing
 * instruction to this deployment (`mesh packages set-auto-upgrade --enabled on`), to which every such
 * upgrade is then attributed.
 */

/** The standing instruction that lets the sweep upgrade drifted installs on its own. */
export const AUTO_UPGRADE = 'packages.auto_upgrade';

/** The standing instruction as the faces show it. */
export interface AutoUpgradeAnswer {
  readonly enabled: boolean;
  /** Who gave the instruction, and when (null when no operator ever did: off). */
  readonly set_by: string | null;
  readonly set_at: string | null;
}

function answerOf(instruction: StandingInstruction | undefined): AutoUpgradeAnswer {
  return {
    enabled: instruction?.value === true,
    set_by: instruction?.setBy ?? null,
    set_at: instruction?.setAt.toISOString() ?? null,
  };
}

/** Whether drifted installs are upgraded by the sweep, and on whose instruction. */
export async function autoUpgrade(mesh: Mesh): Promise<AutoUpgradeAnswer> {
  return answerOf(await findStandingInstruction(mesh.db, AUTO_UPGRADE));
}

/** Gives or withdraws the standing instruction, attributed to the operator who asks. */
export async function setAutoUpgrade(
  mesh: Mesh,
  enabled: boolean,
  actor: string,
): Promise<AutoUpgradeAnswer> {
  return answerOf(await setStandingInstruction(mesh.db, AUTO_UPGRADE, enabled, actor));
}

/** What one pass of the sweep found and did. */
export interface DriftSweep {
  /** Enabled installs pinned to another build of their package than the one running. */
  readonly drifted: number;
  /** Of those, the ones this pass saw first (stamped now). */
  readonly newlySeen: number;
  /** Upgraded on a standing instruction (0 without one). */
  readonly upgraded: number;
}

/**
 * Records which installs drifted and, only under the standing instruction, upgrades them as the
 * operator who gave it. Without the instruction no hook runs.
 */
export async function sweepDrift(mesh: Mesh): Promise<DriftSweep> {
  const lifecycle = lifecycleOf(mesh);
  const drifted = await lifecycle.drifted();
  const newlySeen = await lifecycleStore(mesh.db).recordDrift(drifted.map((i) => i.id));
  if (drifted.length === 0) return { drifted: 0, newlySeen, upgraded: 0 };
  const standing = await findStandingInstruction(mesh.db, AUTO_UPGRADE);
  if (standing?.value !== true) return { drifted: drifted.length, newlySeen, upgraded: 0 };
  const upgraded = await lifecycle.upgradeDrifted(
    `${standing.setBy} (standing instruction of ${standing.setAt.toISOString()})`,
  );
  return { drifted: drifted.length, newlySeen, upgraded };
}
