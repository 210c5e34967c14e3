-- A connector type's own settings live in one type-neutral column: each type reads its shape from it.
-- A rename, not a new column, so the ldap connectors stored so far keep their settings as they are.
ALTER TABLE "connectors" RENAME COLUMN "ldap_config" TO "settings";
