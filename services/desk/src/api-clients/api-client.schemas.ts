import { Type, type Static } from '@sinclair/typebox';
import { ALL_SCOPES } from '@msp/auth';
import {
  DateTime,
  Nullable,
  Uuid,
  named,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  strictObject,
  stringEnum,
} from '@msp/http';
import { NAME_MAX, Text } from '../shared/http.schemas';

/** Seven days: the longest a replaced secret keeps working after a rotation. */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;

const Scopes = Type.Array(stringEnum(ALL_SCOPES), {
  minItems: 1,
  uniqueItems: true,
  description:
    "Scopes the client may ask tokens for. Only scopes the caller's own token holds may be granted (else 422 `scope-not-held`).",
});

const EXAMPLE = {
  id: '7d1f0c2a-3b4e-4f5a-8b6c-9d0e1f2a3b4c',
  client_id: 'cli_3f9a1c0b7e2d4a65',
  name: 'Reporting tool',
  scopes: ['read:tickets', 'read:users'],
  previous_secret_expires_at: null,
  created_at: '2026-11-02T10:00:00.000Z',
  updated_at: '2026-11-02T10:00:00.000Z',
};

const apiClientProperties = {
  id: Uuid({ description: "The resource id used in this API's paths." }),
  client_id: Type.String({ description: 'The identifier presented to the token endpoint.' }),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  previous_secret_expires_at: Nullable(
    DateTime({
      description:
        'After a rotation: until when the replaced secret is still accepted; null when no replaced secret works any more.',
    }),
  ),
  created_at: DateTime(),
  updated_at: DateTime(),
};

export const ApiClientSchema = named(
  'ApiClient',
  Type.Object(apiClientProperties, {
    additionalProperties: false,
    description: 'An API client of the tenant. Its secret is never shown again after creation or rotation.',
    examples: [EXAMPLE],
  }),
);
export type ApiClient = Static<typeof ApiClientSchema>;

export const ApiClientWithSecretSchema = named(
  'ApiClientWithSecret',
  Type.Object(
    {
      ...apiClientProperties,
      client_secret: Type.String({
        description: 'Shown only in this response: store it now. desk keeps only a salted scrypt hash.',
      }),
    },
    {
      additionalProperties: false,
      description: 'An API client with its secret, answered once.',
      examples: [{ ...EXAMPLE, client_secret: 'q3Jb0x1Wz8u2c5kQvYH7nR4mT6aP9sLd' }],
    },
  ),
);
export type ApiClientWithSecret = Static<typeof ApiClientWithSecretSchema>;

export const NewApiClientSchema = named(
  'NewApiClient',
  strictObject(
    {
      name: Text({ minLength: 1, maxLength: NAME_MAX, description: 'What the client is for, e.g. "Reporting tool".' }),
      scopes: Scopes,
    },
    { examples: [{ name: 'Reporting tool', scopes: ['read:tickets', 'read:users'] }] },
  ),
);
export type NewApiClient = Static<typeof NewApiClientSchema>;

export const SecretRotationSchema = named(
  'ApiClientSecretRotation',
  strictObject(
    {
      grace_period_seconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_GRACE_PERIOD_SECONDS,
          default: 0,
          description:
            'How long the replaced secret keeps working, in seconds: 0 (default, at once) to 604800 (7 days).',
        }),
      ),
    },
    { examples: [{ grace_period_seconds: 86_400 }] },
  ),
);
export type SecretRotation = Static<typeof SecretRotationSchema>;

export const ApiClientListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);
export const ApiClientPageSchema = pageSchema('ApiClientPage', ApiClientSchema);
