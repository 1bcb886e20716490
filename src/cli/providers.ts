import { providerOperations } from '../app/backends/operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh providers …`: configure model providers (in the database, never the environment). */
export const providersCommand: CommandBody = operationGroup(providerOperations);
