import { Type } from '@sinclair/typebox';
import { named, type ApiRouter } from '@msp/http';
import { AUTHENTICATED } from './scopes';

const Caller = named(
  'Caller',
  Type.Object(
    {
      client_id: Type.String({ description: 'The API client the token was issued to.' }),
      tenant_id: Type.String(),
      scopes: Type.Array(Type.String()),
      expires_at: Type.String({ format: 'date-time' }),
    },
    {
      examples: [
        {
          client_id: 'dev-7f3a9c',
          tenant_id: '3f2c1a9e-8b7d-4c6e-9f10-2a3b4c5d6e7f',
          scopes: ['read:tickets', 'write:tickets'],
          expires_at: '2026-11-23T10:15:00.000Z',
        },
      ],
    },
  ),
);

/** GET /me: who the presented token says the caller is; the quickest check that a token works here. */
export function registerWhoAmI(api: ApiRouter) {
  api.route({
    method: 'get',
    path: '/me',
    operationId: 'getCaller',
    summary: 'Describe the caller of this request',
    description:
      'Answers with the API client, tenant and scopes of the presented access token, as this service sees them.',
    tags: ['Authentication'],
    scope: AUTHENTICATED,
    responses: { 200: { description: 'The caller.', schema: Caller } },
    handler: (req, res) => {
      const principal = req.principal!;
      res.json({
        client_id: principal.clientId,
        tenant_id: principal.tenantId,
        scopes: principal.scopes,
        expires_at: new Date(principal.expiresAt * 1000).toISOString(),
      });
    },
  });
}
