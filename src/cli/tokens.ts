import { tokenOperations } from '../app/operators/token-operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh tokens …`: operator tokens for the API and the web UI. */
export const tokensCommand: CommandBody = operationGroup(tokenOperations);
