import type { ToolOutput } from './definition.ts';

// What every first-party package's handlers share, however its vendor is reached.

/** The observation for a call that did not do what was asked, saying why and how to fix it. */
export function refused(text: string): ToolOutput {
  return { text, isError: true };
}

/**
 * A package's settings as read from an agent's config for one call: the settings, or the problem
 * (naming the setting, never its value) that keeps the call from running.
 */
export type SettingsOutcome<S> =
  { readonly ok: true; readonly settings: S } | { readonly ok: false; readonly problem: string };
