import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid, named, keysetQueryProperties, pageQueryProperties, pageSchema, strictObject } from '@msp/http';
import { EMAIL_MAX, LONG_TEXT_MAX, NAME_MAX, Text } from '../shared/http.schemas';

const Name = Text({ minLength: 1, maxLength: NAME_MAX, description: 'Unique within the tenant, compared case-insensitively ("ACME" = "Acme").' });
const Email = Nullable(Type.String({ format: 'email', maxLength: EMAIL_MAX }));
const Phone = Nullable(Type.String({ minLength: 1, maxLength: 50, pattern: '^[0-9+()./ -]+$', description: 'Digits, spaces and + ( ) . / -' }));
const Notes = Nullable(Text({ maxLength: LONG_TEXT_MAX }));
const SlaPolicyId = Nullable(
  Uuid({ description: 'The SLA policy the client\'s new tickets take (an SLA policy of the tenant, else 422); null: the tenant\'s default policy, if any.' }),
);

export const ClientSchema = named(
  'Client',
  Type.Object(
    {
      id: Uuid(),
      name: Type.String(),
      email: Nullable(Type.String()),
      phone: Nullable(Type.String()),
      notes: Nullable(Type.String()),
      sla_policy_id: SlaPolicyId,
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'A customer company of the tenant.',
      examples: [
        {
          id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          name: 'Contoso Ltd',
          email: 'it@contoso.example',
          phone: '+49 30 1234567',
          notes: 'Office hours 8–17; call before on-site visits.',
          sla_policy_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          created_at: '2026-11-02T10:00:00.000Z',
          updated_at: '2026-11-02T10:00:00.000Z',
        },
      ],
    },
  ),
);
export type Client = Static<typeof ClientSchema>;

export const NewClientSchema = named(
  'NewClient',
  strictObject(
    { name: Name, email: Type.Optional(Email), phone: Type.Optional(Phone), notes: Type.Optional(Notes), sla_policy_id: Type.Optional(SlaPolicyId) },
    { examples: [{ name: 'Contoso Ltd', email: 'it@contoso.example', phone: '+49 30 1234567', notes: 'Office hours 8–17; call before on-site visits.' }] },
  ),
);
export type NewClient = Static<typeof NewClientSchema>;

export const ClientChangesSchema = named(
  'ClientChanges',
  strictObject(
    { name: Type.Optional(Name), email: Type.Optional(Email), phone: Type.Optional(Phone), notes: Type.Optional(Notes), sla_policy_id: Type.Optional(SlaPolicyId) },
    {
      minProperties: 1,
      description: 'The fields to change; at least one. `null` clears email, phone, notes or sla_policy_id.',
      examples: [{ phone: '+49 30 7654321', notes: null }, { sla_policy_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' }],
    },
  ),
);
export type ClientChanges = Static<typeof ClientChangesSchema>;

export const ClientListQuery = Type.Object({ ...pageQueryProperties, ...keysetQueryProperties }, { additionalProperties: false });
export const ClientPageSchema = pageSchema('ClientPage', ClientSchema);
