import { browserOperations } from '../app/backends/browser-operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh browsers …`: where agents' browser sessions run, who may use them, what runs now. */
export const browsersCommand: CommandBody = operationGroup([...browserOperations]);
