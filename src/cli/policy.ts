import { configOperations } from '../app/packages/config-operations.ts';
import { secretOperations } from '../app/packages/secret-operations.ts';
import { installOperations } from '../app/packages/install-operations.ts';
import { packageOperations } from '../app/packages/package-operations.ts';
import { operationGroup } from './operation-command.ts';
import type { CommandBody } from './command.ts';

/** `mesh config …`: an agent's tool config values. */
export const configCommand: CommandBody = operationGroup(configOperations);

/** `mesh secrets …`: an agent's credentials for tools, write-only. */
export const secretsCommand: CommandBody = operationGroup(secretOperations);

/**
 * `mesh packages …`: what the manifests declare, each agent's install of them (moved through the
 * lifecycle executor), and the archive path.
 */
export const packagesCommand: CommandBody = async (args, io) =>
  operationGroup(
    [...packageOperations, ...installOperations],
    (await import('./package-archives.ts')).archiveSubcommands,
  )(args, io);
