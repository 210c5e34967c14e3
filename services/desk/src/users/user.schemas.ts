import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid, named, keysetQueryProperties, pageQueryProperties, pageSchema, stringEnum, strictObject } from '@msp/http';
import { EMAIL_MAX, NAME_MAX, Text } from '../shared/http.schemas';

export const USER_ROLES = ['technician', 'lead', 'admin'] as const;
export const UserRole = named('UserRole', stringEnum(USER_ROLES));

export const UserSchema = named(
  'User',
  Type.Object(
    {
      id: Uuid(),
      name: Type.String(),
      email: Type.String({ format: 'email' }),
      role: UserRole,
      active: Type.Boolean({ description: 'False once deleted: the user stays readable by id so history keeps the name.' }),
      deactivated_at: Nullable(DateTime()),
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'A technician of the tenant.',
      examples: [
        {
          id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01',
          name: 'Erika Mustermann',
          email: 'erika.mustermann@msp.example',
          role: 'technician',
          active: true,
          deactivated_at: null,
          created_at: '2026-10-01T07:30:00.000Z',
          updated_at: '2026-10-01T07:30:00.000Z',
        },
      ],
    },
  ),
);
export type User = Static<typeof UserSchema>;

export const NewUserSchema = named(
  'NewUser',
  strictObject({
    name: Text({ minLength: 1, maxLength: NAME_MAX }),
    email: Type.String({
      format: 'email',
      maxLength: EMAIL_MAX,
      description: 'Unique within the tenant among all users, deactivated ones included; compared case-insensitively.',
    }),
    role: Type.Optional(stringEnum(USER_ROLES, { default: 'technician' })),
  }, { examples: [{ name: 'Erika Mustermann', email: 'erika.mustermann@msp.example', role: 'technician' }] }),
);
export type NewUser = Static<typeof NewUserSchema>;

export const UserListQuery = Type.Object({ ...pageQueryProperties, ...keysetQueryProperties }, { additionalProperties: false });
export const UserPageSchema = pageSchema('UserPage', UserSchema);
