import { agentOperations } from '../app/agent-operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh agents …`: create, show, update, list and delete agents. */
export const agentsCommand: CommandBody = operationGroup(agentOperations);
