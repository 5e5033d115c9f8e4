import { ValidateIf } from 'class-validator';

/**
 * An optional property that is not nullable: it may be omitted, but `null` is validated like any
 * other value and fails the type check (→ 400, SPEC §2 "required field … null"). Use
 * class-validator's `@IsOptional()` only for nullable properties, where `null` clears the value.
 */
export const IsOmittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);
