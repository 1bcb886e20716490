import {
  addModelProvider,
  deleteModelProvider,
  describeProviders,
  type NewProvider,
} from '../../app/model-providers.ts';
import { providerJson } from '../../app/views.ts';
import { closedObject } from '../router.ts';
import { NAME, route, SECRET_VALUE, type Route } from './context.ts';

const CONTEXT_TOKENS = { type: 'integer', minimum: 1000 } as const;

/** The model providers: endpoints with write-only keys, or scripts. */
export const providerRoutes: readonly Route[] = [
  route({
    method: 'POST',
    path: '/api/providers',
    operationId: 'addProvider',
    summary:
      'Add a model provider: an OpenAI-compatible endpoint with its API key (stored encrypted), or a script',
    tag: 'providers',
    status: 201,
    body: {
      oneOf: [
        closedObject(
          {
            name: NAME,
            kind: { const: 'openai_compatible' },
            base_url: { type: 'string', minLength: 1, maxLength: 2000 },
            api_key: SECRET_VALUE,
            context_tokens: CONTEXT_TOKENS,
          },
          ['name', 'kind', 'base_url', 'api_key'],
        ),
        closedObject(
          {
            name: NAME,
            kind: { const: 'scripted' },
            script: { type: 'object' },
            context_tokens: CONTEXT_TOKENS,
          },
          ['name', 'kind', 'script'],
        ),
      ],
    },
    handle: async ({ context, body }) => {
      const provider: NewProvider =
        body.kind === 'scripted'
          ? { name: body.name, kind: 'scripted', script: body.script }
          : {
              name: body.name,
              kind: 'openai_compatible',
              baseUrl: body.base_url,
              apiKey: body.api_key,
            };
      const added = await addModelProvider(context.mesh, {
        ...provider,
        ...(body.context_tokens ? { contextTokens: body.context_tokens } : {}),
      });
      const described = (await describeProviders(context.mesh)).find((p) => p.id === added.id);
      return providerJson(described ?? { ...added, apiKey: null });
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/providers/{provider}',
    operationId: 'deleteProvider',
    summary: 'Delete a model provider and retire its API key (refused while an agent uses it)',
    tag: 'providers',
    status: 204,
    handle: async ({ context, params }) => {
      await deleteModelProvider(context.mesh, params['provider'] ?? '');
    },
  }),
];
