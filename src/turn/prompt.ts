import type { ToolPackage } from '../manifest/package-manifest.ts';
import { renderSkills } from '../manifest/render-skills.ts';
import type { OpenCommitment } from './turn-environment.ts';

/** What the system prompt is made of for one turn. */
export interface PromptInput {
  readonly agentName: string;
  readonly persona: string | null;
  readonly audience: 'direct' | 'shared';
  readonly offeredTools: readonly string[];
  /** Tools beyond the offered ones are found with tool_search (the turn is on the index). */
  readonly toolSearch?: boolean;
  readonly packages: readonly ToolPackage[];
  /** The agent's own active memories, newest first. */
  readonly memories: readonly { readonly id: string; readonly content: string }[];
  /** The agent's public tool settings (config fields with the `public` disposition). */
  readonly publicSettings?: string;
  /** The agent's open commitments, soonest due first. */
  readonly commitments?: readonly OpenCommitment[];
}

/** The system prompt without memory: persona, the rules of the ledger, and offered skills. */
export function renderSystemPrompt(input: PromptInput): string {
  const persona =
    input.persona?.trim() || `You are ${input.agentName}, an agent working with a team.`;
  const where =
    input.audience === 'shared'
      ? 'This conversation is shared: several people may read and write in it.'
      : 'This is a direct conversation with one person.';
  const tools =
    input.offeredTools.length === 0
      ? 'No tools are available to you in this request: answer with what you have.'
      : `You can act only through the tools offered with this request (${input.offeredTools.join(', ')}).`;
  const search = input.toolSearch
    ? 'Other operations you may use are not offered until you find them with tool_search: search for what you need, and the matches are offered on your next request.'
    : '';
  const skills = renderSkills(input.packages, input.offeredTools);
  const settings = input.publicSettings ?? '';
  return [
    persona,
    where,
    tools,
    search,
    'After tools run, you are given a ledger of what actually happened; report from it truthfully.',
    renderCommitments(input.commitments ?? []),
    settings,
    skills,
  ]
    .filter((s) => s.trim() !== '')
    .join('\n\n');
}

/** The agent's open commitments with their ids (for fulfil), soonest due first. */
export function renderCommitments(commitments: readonly OpenCommitment[]): string {
  if (commitments.length === 0) return '';
  return [
    'Your open commitments (what you promised to do later; fulfil each with its id once done):',
    ...commitments.map((c) => `- [${c.id}] ${c.text}${c.due ? ` (due ${c.due})` : ''}`),
  ].join('\n');
}

/** The memory section: the agent's own memories with their ids (for amend and forget). */
export function renderMemory(memories: PromptInput['memories']): string {
  if (memories.length === 0) return '';
  return [
    'What you remember (your own memories; use recall for more):',
    ...memories.map((m) => `- [${m.id}] ${m.content}`),
  ].join('\n');
}
