import { webProviderKeyOperation } from '../app/backends/operations.ts';
import { webOperations } from '../app/backends/web-operations.ts';
import type { CommandBody } from './command.ts';
import { operationGroup } from './operation-command.ts';

/** `mesh web …`: the hosted search and reading APIs behind web_search and web_read. */
export const webCommand: CommandBody = operationGroup([...webOperations, webProviderKeyOperation]);
