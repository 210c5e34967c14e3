import { Type, type Static } from '@sinclair/typebox';
import { Nullable, strictObject, stringEnum } from '@msp/http';

// An `ldap` connector's `config`: as created, as changed by PATCH, and as shown (its bind password only said to be set).

export const LDAP_FLAVORS = ['active_directory', 'openldap'] as const;

const dn = (description: string, example: string) =>
  Type.String({ minLength: 3, maxLength: 1000, pattern: '^[^=]+=.+', description, examples: [example] });
const ldapUrl = Type.String({
  pattern: '^ldaps?://[^\\s/?#]+/?$',
  maxLength: 2000,
  description:
    '`ldaps://host[:port]` (TLS from the first byte), or `ldap://host[:port]` with `start_tls: ' +
    'true`. A plain `ldap://` without StartTLS is refused (`insecure_transport`) unless the ' +
    'server is on loopback and OUTBOUND_ALLOW_LOOPBACK is set.',
  examples: ['ldaps://dc1.corp.example'],
});
const bindPassword = Type.String({
  minLength: 1,
  maxLength: 1024,
  writeOnly: true,
  description: "The bind account's password. Write-only: stored encrypted (AES-256-GCM), never returned or logged.",
  examples: ["<the bind account's password>"],
});
const ldapProperties = {
  flavor: stringEnum(LDAP_FLAVORS, {
    description:
      '`active_directory` (also Samba AD) or `openldap`: which attributes hold the id, the user name, the disabled state and the change counter.',
  }),
  url: ldapUrl,
  start_tls: Type.Boolean({
    default: false,
    description: 'Upgrade an `ldap://` connection with StartTLS before binding.',
  }),
  bind_dn: dn(
    'The account link binds as (see docs/directories.md for the permissions it needs).',
    'CN=link-svc,OU=Service Accounts,DC=corp,DC=example',
  ),
  bind_password: bindPassword,
  base_dn: dn('The naming context (`DC=corp,DC=example`).', 'DC=corp,DC=example'),
  users_ou: dn('Where users are read and joiners created.', 'OU=Staff,DC=corp,DC=example'),
  disabled_ou: dn('Where leavers are moved; omit to leave them in place.', 'OU=Disabled,DC=corp,DC=example'),
  groups_base: dn('Where groups are read (default: `base_dn`).', 'OU=Groups,DC=corp,DC=example'),
  ca_certificate: Type.String({
    minLength: 1,
    maxLength: 20000,
    pattern: '-----BEGIN CERTIFICATE-----',
    description:
      "PEM of the CA that issued the server's certificate, when it is not a public one. The certificate is always verified.",
  }),
  bundle_groups: Type.Record(
    Type.String({ minLength: 1, maxLength: 200 }),
    Type.String({ minLength: 1, maxLength: 1000 }),
    {
      description: 'Bundle name → group DN or name: what `assign_bundles` and `change_bundles` add and remove.',
      examples: [{ vpn: 'CN=VPN,OU=Groups,DC=corp,DC=example' }],
    },
  ),
  upn_suffix: Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[A-Za-z0-9.-]+$',
    description: 'AD: `userPrincipalName` is `<sAMAccountName>@<upn_suffix>` when a joiner has no e-mail.',
    examples: ['corp.example'],
  }),
  department_ous: Type.Record(
    Type.String({ minLength: 1, maxLength: 200 }),
    Type.String({ minLength: 3, maxLength: 1000 }),
    {
      description: 'Department → OU DN: a mover whose new department is named here is moved there.',
      examples: [{ Finance: 'OU=Finance,DC=corp,DC=example' }],
    },
  ),
};

export const LdapConfigInput = strictObject(
  {
    flavor: ldapProperties.flavor,
    url: ldapProperties.url,
    start_tls: Type.Optional(ldapProperties.start_tls),
    bind_dn: ldapProperties.bind_dn,
    bind_password: ldapProperties.bind_password,
    base_dn: ldapProperties.base_dn,
    users_ou: ldapProperties.users_ou,
    disabled_ou: Type.Optional(ldapProperties.disabled_ou),
    groups_base: Type.Optional(ldapProperties.groups_base),
    ca_certificate: Type.Optional(ldapProperties.ca_certificate),
    bundle_groups: Type.Optional(ldapProperties.bundle_groups),
    upn_suffix: Type.Optional(ldapProperties.upn_suffix),
    department_ous: Type.Optional(ldapProperties.department_ous),
  },
  { description: 'How to reach the Active Directory or OpenLDAP directory (`type: ldap`).' },
);
export type LdapConfigInput = Static<typeof LdapConfigInput>;

export const LdapConfigPatch = strictObject(
  {
    url: Type.Optional(ldapProperties.url),
    start_tls: Type.Optional(ldapProperties.start_tls),
    bind_dn: Type.Optional(ldapProperties.bind_dn),
    bind_password: Type.Optional(ldapProperties.bind_password),
    base_dn: Type.Optional(ldapProperties.base_dn),
    users_ou: Type.Optional(ldapProperties.users_ou),
    disabled_ou: Type.Optional(Nullable(ldapProperties.disabled_ou)),
    groups_base: Type.Optional(Nullable(ldapProperties.groups_base)),
    ca_certificate: Type.Optional(Nullable(ldapProperties.ca_certificate)),
    bundle_groups: Type.Optional(ldapProperties.bundle_groups),
    upn_suffix: Type.Optional(Nullable(ldapProperties.upn_suffix)),
    department_ous: Type.Optional(ldapProperties.department_ous),
  },
  {
    description:
      '`ldap` connectors: any of these; an omitted member keeps its value, null clears an optional one. `flavor` cannot change.',
  },
);
export type LdapConfigPatch = Static<typeof LdapConfigPatch>;

export const LdapConfigOutput = Type.Object(
  {
    flavor: ldapProperties.flavor,
    url: Type.String(),
    start_tls: Type.Boolean(),
    bind_dn: Type.String(),
    bind_password_set: Type.Boolean({
      description: 'Always true: a password is stored (encrypted); it is never returned.',
    }),
    base_dn: Type.String(),
    users_ou: Type.String(),
    disabled_ou: Nullable(Type.String()),
    groups_base: Nullable(Type.String()),
    ca_certificate: Nullable(Type.String()),
    bundle_groups: Type.Record(Type.String(), Type.String()),
    upn_suffix: Nullable(Type.String()),
    department_ous: Type.Record(Type.String(), Type.String()),
  },
  { additionalProperties: false, description: '`ldap` connectors.' },
);
export type LdapConfigOutput = Static<typeof LdapConfigOutput>;
