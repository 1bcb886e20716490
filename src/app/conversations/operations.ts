import { AGENT_FIELD, LIMIT_FIELD } from '../operations/fields.ts';
import { actingAs } from '../operations/acting.ts';
import { defineOperation } from '../operations/operation.ts';
import { isoText } from '../views.ts';

/*
 * Conversations as operations of the catalog: sending an agent a message (its run queued, or
 * waited on), and reading an agent's conversations and one conversation's messages.
 */

/** The longest a caller may hold a request open for its run to settle, in seconds. */
export const MAX_WAIT_S = 120;

const UUID_PATTERN =
  '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** What sending a message answers: where to follow its run, and once settled, its reply. */
export interface SentAnswer {
  readonly run_id: string;
  readonly conversation_id: string;
  readonly message_id: string;
  readonly status: string;
  /** Present once the run settled within the wait. */
  readonly reason?: string | null;
  readonly reply?: string | null;
  readonly events: string;
  readonly run: string;
}

export const sendMessageOperation = defineOperation({
  name: 'messages.send',
  summary:
    'Send a message to an agent (a new conversation unless one is named): it is recorded with its run, queued, and answered 202 with where to follow the run',
  description: [
    "The message and its run are recorded before the answer; a worker in any `mesh serve` replica drives the turn (a queued run survives a restart). The answer is `202` with `{run_id, conversation_id, message_id, status, events, run}`: `events` is the run's event stream (`GET /api/runs/{run}/events`), which carries its steps and its `reply`, and `run` its record.",
    '',
    `To wait for the reply in the request instead, ask with \`?wait=SECONDS\` (0-${MAX_WAIT_S}) or \`Prefer: wait=N\` (cut to ${MAX_WAIT_S}; answered with \`Preference-Applied\`). A run that settles in time is answered \`200\` with its \`status\`, \`reason\` and \`reply\` added; one still going is answered \`202\` as above.`,
  ].join('\n'),
  tag: 'conversations',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'body'],
    properties: {
      agent: AGENT_FIELD,
      body: { type: 'string', minLength: 1, maxLength: 100000, description: 'the message' },
      conversation_id: {
        type: 'string',
        pattern: UUID_PATTERN,
        description: 'the conversation it continues (default: a new one)',
      },
      audience: {
        enum: ['direct', 'shared'],
        description: "a new conversation's audience (default direct)",
      },
      actor: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description:
          'who the message is from, as the channel names them (default: the caller); only a relay token may name another, and it is recorded as relayed by that token',
      },
      wait: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_S,
        description: `wait up to this many seconds (0-${MAX_WAIT_S}) for the run to settle, and answer its reply if it does`,
      },
    },
  },
  errors: ['agent_not_found', 'conversation_not_found', 'relay_not_allowed'],
  http: {
    method: 'POST',
    path: '/api/agents/{agent}/messages',
    status: 202,
    query: ['wait'],
    preferWait: 'wait',
    answer: (out: SentAnswer) => ({
      status: out.reply === undefined ? 202 : 200,
      headers: { location: out.run },
    }),
  },
  cli: {
    notOnCli: '`mesh chat` sends it, waits and follows the run until it settles (runs.show)',
  },
  async run(mesh, input, caller): Promise<SentAnswer> {
    const [{ requireAgent }, turns] = await Promise.all([
      import('../agents/agents.ts'),
      import('./turns.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const message = {
      agentId: agent.id,
      ...(input.conversation_id ? { conversationId: input.conversation_id } : {}),
      ...(input.audience ? { audience: input.audience } : {}),
      ...actingAs(caller, input.actor, 'actor'),
      body: input.body,
    };
    const links = (runId: string) => ({
      events: `/api/runs/${runId}/events`,
      run: `/api/runs/${runId}`,
    });
    const wait = input.wait ?? 0;
    // A process with no worker of its own (the CLI on its own home) drives the turn itself.
    if (wait > 0 && !mesh.runs.worker) {
      const outcome = await turns.chat(mesh, message);
      const messageId = (await mesh.ledger.run(outcome.runId))?.inboundMessageId ?? '';
      return {
        run_id: outcome.runId,
        conversation_id: outcome.conversationId,
        message_id: messageId,
        status: outcome.status,
        reason: outcome.reason,
        reply: outcome.reply,
        ...links(outcome.runId),
      };
    }
    const sent = await turns.sendMessage(mesh, message);
    const ids = {
      run_id: sent.runId,
      conversation_id: sent.conversationId,
      message_id: sent.messageId,
    };
    // Unless asked to wait, the answer is the queued run: nothing more is read.
    if (wait === 0) return { ...ids, status: 'queued', ...links(sent.runId) };
    const run = await mesh.runs.settled(sent.runId, wait * 1000);
    const outcome = run && (await turns.turnOutcome(mesh, run));
    if (!outcome) return { ...ids, status: run?.status ?? 'queued', ...links(sent.runId) };
    return {
      ...ids,
      status: outcome.status,
      reason: outcome.reason,
      reply: outcome.reply,
      ...links(sent.runId),
    };
  },
});

/** A conversation as the API answers it (`conversationJson`). */
export interface ConversationAnswer {
  readonly id: string;
  readonly agent_id: string;
  readonly audience: string;
  readonly title: string | null;
  readonly created_at: string;
  readonly messages?: number;
  readonly last_message_at?: string | null;
}

export const listConversationsOperation = defineOperation({
  name: 'conversations.list',
  summary: "An agent's conversations, most recent first",
  tag: 'conversations',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent'],
    properties: {
      agent: AGENT_FIELD,
      limit: LIMIT_FIELD,
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/conversations' },
  cli: {
    command: ['conversations', 'list'],
    print: (out: { conversations: readonly ConversationAnswer[] }) =>
      out.conversations.length === 0
        ? ['No conversations.']
        : out.conversations.map(
            (c) =>
              `${c.id}  ${c.audience.padEnd(6)}  ${c.messages ?? '?'} messages  last ${c.last_message_at ? isoText(c.last_message_at) : 'never'}${c.title ? `  ${c.title}` : ''}`,
          ),
  },
  async run(mesh, input): Promise<{ conversations: ConversationAnswer[] }> {
    const [{ requireAgent }, { listConversations }, { conversationJson }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./reads.ts'),
      import('../views.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const rows = await listConversations(mesh, agent.id, input.limit ?? 50);
    return {
      conversations: rows.map((c) => conversationJson(c) as unknown as ConversationAnswer),
    };
  },
});

/** A message as the API answers it (`messageJson`). */
export interface MessageAnswer {
  readonly id: string;
  readonly direction: string;
  readonly actor: string;
  /** Who posted it for `actor` (a relay token's actor); null when the actor posted it. */
  readonly relayed_by: string | null;
  readonly body: string;
  readonly created_at: string;
}

export const showConversationOperation = defineOperation({
  name: 'conversations.show',
  summary: "A conversation's messages, oldest first",
  tag: 'conversations',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['conversation'],
    properties: {
      conversation: { type: 'string', minLength: 1, maxLength: 64, description: 'its id' },
    },
  },
  errors: ['conversation_not_found'],
  http: { method: 'GET', path: '/api/conversations/{conversation}/messages' },
  cli: {
    command: ['conversations', 'show'],
    positionals: ['conversation'],
    print: (out: { conversation: ConversationAnswer; messages: readonly MessageAnswer[] }) => [
      `conversation ${out.conversation.id}  ${out.conversation.audience}`,
      ...out.messages.map(
        (m) =>
          `${isoText(m.created_at)}  ${m.direction === 'inbound' ? m.actor : 'agent'}${m.relayed_by ? ` (relayed by ${m.relayed_by})` : ''}: ${m.body}`,
      ),
    ],
  },
  async run(mesh, input): Promise<{ conversation: ConversationAnswer; messages: MessageAnswer[] }> {
    const [{ getConversation, listMessages }, { conversationJson, messageJson }, { MeshError }] =
      await Promise.all([
        import('./reads.ts'),
        import('../views.ts'),
        import('../../tool/errors.ts'),
      ]);
    const id = input.conversation;
    const conversation = new RegExp(UUID_PATTERN).test(id)
      ? await getConversation(mesh, id)
      : undefined;
    if (!conversation)
      throw new MeshError('conversation_not_found', 'no conversation with that id');
    return {
      conversation: conversationJson(conversation) as unknown as ConversationAnswer,
      messages: (await listMessages(mesh, conversation.id)).map(
        (m) => messageJson(m) as unknown as MessageAnswer,
      ),
    };
  },
});

export const conversationOperations = [
  sendMessageOperation,
  listConversationsOperation,
  showConversationOperation,
] as const;
