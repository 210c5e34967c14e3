import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Nullable,
  Uuid,
  named,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  stringEnum,
  strictObject,
} from '@msp/http';
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
      active: Type.Boolean({
        description: 'False once deleted: the user stays readable by id so history keeps the name.',
      }),
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

const Name = Text({ minLength: 1, maxLength: NAME_MAX });
const Email = Type.String({
  format: 'email',
  maxLength: EMAIL_MAX,
  description: 'Unique within the tenant among all users, deactivated ones included; compared case-insensitively.',
});

export const NewUserSchema = named(
  'NewUser',
  strictObject(
    {
      name: Name,
      email: Email,
      role: Type.Optional(stringEnum(USER_ROLES, { default: 'technician' })),
    },
    { examples: [{ name: 'Erika Mustermann', email: 'erika.mustermann@msp.example', role: 'technician' }] },
  ),
);
export type NewUser = Static<typeof NewUserSchema>;

export const UserChangesSchema = named(
  'UserChanges',
  strictObject(
    {
      name: Type.Optional(Name),
      email: Type.Optional(Email),
      role: Type.Optional(UserRole),
      active: Type.Optional(
        Type.Boolean({
          description:
            '`false` deactivates the user as `DELETE /users/{id}` does (they leave the list, cannot be ' +
            'assigned, and their open, in-progress and pending tickets become unassigned); ' +
            '`true` reactivates a deactivated user (`deactivated_at` back to null; tickets unassigned before stay unassigned).',
        }),
      ),
    },
    {
      minProperties: 1,
      description: 'The fields to change; at least one. Setting a field to its current value changes nothing.',
      examples: [
        { role: 'lead' },
        { name: 'Erika Musterfrau', email: 'erika.musterfrau@msp.example' },
        { active: false },
      ],
    },
  ),
);
export type UserChanges = Static<typeof UserChangesSchema>;

export const UserListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);
export const UserPageSchema = pageSchema('UserPage', UserSchema);
