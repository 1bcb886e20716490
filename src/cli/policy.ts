import { configOperations } from '../app/packages/config-operations.ts';
import { secretOperations } from '../app/packages/secret-operations.ts';
import { packageOperations } from '../app/packages/package-operations.ts';
import { operationGroup } from './operation-command.ts';
import type { CommandBody } from './command.ts';

/** `mesh config …`: an agent's tool config values. */
export const configCommand: CommandBody = operationGroup(configOperations);

/** `mesh secrets …`: an agent's credentials for tools, write-only. */
export const secretsCommand: CommandBody = operationGroup(secretOperations);

/** `mesh packages …`: what the manifests declare, and how each is installed for an agent. */
export const packagesCommand: CommandBody = async (args, io) =>
  operationGroup(packageOperations, (await import('./package-archives.ts')).archiveSubcommands)(
    args,
    io,
  );
