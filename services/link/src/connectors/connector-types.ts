import { ldapType } from '../ldap/ldap-type';
import { scimType } from '../scim/scim-type';
import type { ConnectorTypeDefinition } from './connector-type';
import type { ConnectorType } from './connectors.repository';

/**
 * Every connector type, by name. Typed by the database's enum, so a value added there does not
 * compile until its definition is listed here; the order is the OpenAPI document's.
 */
const CONNECTOR_TYPES: { [T in ConnectorType]: ConnectorTypeDefinition<T> } = {
  scim: scimType,
  ldap: ldapType,
};

export const connectorTypeNames = Object.keys(CONNECTOR_TYPES) as ConnectorType[];
export const connectorTypes: ConnectorTypeDefinition[] = Object.values(CONNECTOR_TYPES);

export function connectorTypeOf(type: ConnectorType): ConnectorTypeDefinition {
  return CONNECTOR_TYPES[type];
}

/** Why a connector cannot reach its directory when its sealed secret no longer opens, and what to do. */
export function secretUnreadable(type: ConnectorType): string {
  const { secret } = connectorTypeOf(type);
  return (
    `the connector's ${secret.name} cannot be decrypted (was CONNECTOR_ENCRYPTION_KEY changed?); ` +
    `set it again with PATCH config.${secret.field}`
  );
}
