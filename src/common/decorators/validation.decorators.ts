import { getMetadataStorage, ValidateBy, ValidateIf } from 'class-validator';

/**
 * An optional property that is not nullable: it may be omitted, but `null` is validated like any
 * other value and fails the type check (→ 400: a required field that is `null`, docs/errors.md#400-or-422). Use
 * class-validator's `@IsOptional()` only for nullable properties, where `null` clears the value.
 */
export const IsOmittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** Name of the class-validator constraint {@link ReadOnlyProperty} records. */
export const READ_ONLY_CONSTRAINT = 'readOnlyProperty';

/**
 * Marks a property a client reads back but never sets (an owner, a computed total): accepted in
 * every write body and dropped before validation (docs/writes.md#read-only-and-unknown-fields), like `id`,
 * `created_at`, `updated_at` and `links`. Recorded as class-validator metadata (a constraint that
 * always passes), which subclasses inherit and @nestjs/swagger's `PartialType`, `OmitType`,
 * `PickType` and `IntersectionType` copy to the classes they make, so `Update…Dto extends
 * PartialType(Create…Dto)` drops the same properties. Put `@ApiHideProperty()` beside it (the
 * Swagger plugin recognises that decorator by its name only) and declare the property without a
 * value, so it stays out of the request schema and out of the DTO instance:
 * `@ReadOnlyProperty() @ApiHideProperty() declare owner?: never;`
 */
export const ReadOnlyProperty = () => ValidateBy({ name: READ_ONLY_CONSTRAINT, validator: { validate: () => true } });

const readOnlyCache = new WeakMap<Function, readonly string[]>();

/** The properties of DTO class `dto` (its own, inherited and mapped-type copied ones) marked {@link ReadOnlyProperty}. */
export function readOnlyPropertiesOf(dto: Function): readonly string[] {
  let names = readOnlyCache.get(dto);
  if (names === undefined) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
    names = [...new Set(rules.filter((rule) => rule.name === READ_ONLY_CONSTRAINT).map((rule) => rule.propertyName))];
    readOnlyCache.set(dto, names);
  }
  return names;
}
