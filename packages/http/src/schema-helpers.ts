import {
  Type,
  type Static,
  type TProperties,
  type TSchema,
  type ObjectOptions,
  type SchemaOptions,
} from '@sinclair/typebox';

/** A request body object: unknown fields are a 400, never silently ignored. */
export function strictObject<T extends TProperties>(properties: T, options: ObjectOptions = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** A string enum emitted as `enum` (readable in OpenAPI), typed as the union of its values. */
export function stringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A UUID (8-4-4-4-12 hex digits, either case), lower-cased when a request is validated (validation.ts). */
export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: 'uuid', 'x-lowercase': true, ...options });
/**
 * A map from ids to `value`: every key an id (8-4-4-4-12 hex digits, either case), lower-cased when
 * a request is validated like every other id; two keys naming one id in different cases are a 400.
 */
export const UuidKeyed = <T extends TSchema>(value: T, options: SchemaOptions = {}) =>
  Type.Unsafe<Record<string, Static<T>>>({
    type: 'object',
    propertyNames: { type: 'string', format: 'uuid' },
    additionalProperties: value,
    'x-lowercase-keys': true,
    ...options,
  });
export const DateTime = (options: SchemaOptions = {}) => Type.String({ format: 'date-time', ...options });
export const DateOnly = (options: SchemaOptions = {}) => Type.String({ format: 'date', ...options });
// Times of day are checked by format alone (a pattern as well would report every bad value twice).
/** A time of day `HH:MM` that starts something: 00:00–23:59. */
export const StartTimeOfDay = (options: SchemaOptions = {}) => Type.String({ format: 'hh-mm-start', ...options });
/** A time of day `HH:MM` that ends something: 00:00–23:59 or 24:00, the end of the day. */
export const EndTimeOfDay = (options: SchemaOptions = {}) => Type.String({ format: 'hh-mm', ...options });

/** Path parameter `:id`. */
export const IdParams = Type.Object({ id: Uuid({ description: 'The resource id (UUID).' }) });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
