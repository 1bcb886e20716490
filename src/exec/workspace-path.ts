import { posix } from 'node:path';
import { WorkspaceFileError } from '../tool/workspace.ts';

/**
 * Resolves a handler's path against a workspace root, as the workspace's commands see paths
 * (POSIX): relative paths are joined to the root, absolute ones must already lie inside it, and
 * `..` may not climb out. The result is normalized and has no trailing slash. Backends apply it
 * before touching the path, so a refusal never depends on what exists in the workspace.
 */
export function resolveWorkspacePath(root: string, path: string): string {
  if (path.includes('\0'))
    throw new WorkspaceFileError('outside_root', 'the path contains a NUL byte');
  const joined = posix.isAbsolute(path) ? path : posix.join(root, path);
  const normalized = posix.normalize(joined).replace(/(.)\/+$/, '$1');
  if (normalized !== root && !normalized.startsWith(`${root}/`)) {
    throw new WorkspaceFileError(
      'outside_root',
      `the path leaves the workspace: give a path relative to the workspace root (${root})`,
    );
  }
  return normalized;
}
