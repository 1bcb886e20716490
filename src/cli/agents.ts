import { agentOperations } from '../app/agents/operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh agents …`: create, show, update, list and delete agents. */
export const agentsCommand: CommandBody = operationGroup(agentOperations);
