import type { TSchema } from '@sinclair/typebox';

// Schemas given a name are emitted once under components/schemas and referenced
// by $ref everywhere else. Identity, not structure, decides what is "the same".
const names = new WeakMap<object, string>();

export function named<T extends TSchema>(name: string, schema: T): T {
  names.set(schema, name);
  return schema;
}

export function schemaName(schema: object): string | undefined {
  return names.get(schema);
}
