import { runOperations } from '../app/runs/operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh runs list`: find a run; `mesh runs show ID`: read it step by step. */
export const runsCommand: CommandBody = operationGroup(runOperations);
