/*
 * The hook protocol is part of the contract packages are written against (src/tool/hook.ts);
 * the manifest layer binds and verifies hooks by these types.
 */
export type { HookContext, HookName, HookOutcome, PackageHook } from '../tool/hook.ts';
