import { getMetadataStorage } from 'class-validator';

type Json = Record<string, any>;

/** One registered validator of a DTO property. */
type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** Where `@ApiSchema()` keeps its options on a class (`DECORATORS.API_SCHEMA` of @nestjs/swagger, not exported by the package). */
const API_SCHEMA_METADATA = 'swagger/apiSchema';

/** The schema keywords one class-validator constraint stands for, merged into a property's schema. */
type Rule = (schema: Json, constraints: any[]) => void;

/**
 * The validators the Swagger CLI plugin cannot state, as OpenAPI 3.0 schema keywords. Everything
 * else comes from the plugin's `classValidatorShim` (src/metadata.ts, written by
 * scripts/swagger-metadata.mjs): `MinLength`, `MaxLength`, `Length`, `Min`, `Max`,
 * `ArrayMinSize`, `ArrayMaxSize`, `ArrayUnique`, `IsEmail`, `IsUrl`, `IsUUID` and a `Matches`
 * whose argument is a regular-expression literal. Left here:
 * - `IsNotEmpty` → `minLength: 1` on a string: the shim has no mapping for it;
 * - `Matches` where the schema states no `pattern` yet: the shim ignores `each: true` (it would
 *   describe the array, not its items) and the generated metadata holds literals only, so a regular
 *   expression kept in a constant (`TAG_NAME`) never reaches it. A pattern with flags (other than
 *   `u`) has no JSON Schema form; the property's text says it.
 * The rest the shim cannot state is written in the DTO's `@ApiProperty`, which the bodies derived
 * with `PartialType` inherit (these rules reach only classes with validators of their own): a bound
 * held in a constant (`maxLength: MAX_WEBHOOK_URL_LENGTH`, literals only, as above), `type:
 * 'integer'` of `IsInt`, `format: 'date-time'` of `IsDateString`, the enumerations of `IsIn` (the
 * shim skips `IsIn` when it writes a metadata file), custom rules (redirect URIs, registered scopes
 * and event types), and a bound a pattern implies (`minLength: 3` beside `^[a-z0-9_]{3,32}$`).
 */
const RULES: Record<string, Rule> = {
  // `IsNotEmpty` refuses "" (and null/undefined): a string must have at least one character
  isNotEmpty: (schema) => {
    if (schema.type !== 'string') return;
    schema.minLength = typeof schema.minLength === 'number' ? Math.max(schema.minLength, 1) : 1;
  },
  matches: (schema, [pattern, modifiers]) => {
    if (schema.pattern !== undefined) return;
    const flags = pattern instanceof RegExp ? pattern.flags : (modifiers ?? '');
    if (flags.replace('u', '') === '') schema.pattern = pattern instanceof RegExp ? pattern.source : String(pattern);
  },
};

/** The constraint's name as class-validator reports it (`isNotEmpty`, `matches`, …). */
function constraintName(metadata: ValidationMetadata): string {
  return metadata.name ?? metadata.type;
}

/** The component name the Swagger generator gives a DTO class: its `@ApiSchema` name, else the class name. */
function schemaNameOf(type: Function): string {
  const schemas = (Reflect.getOwnMetadata(API_SCHEMA_METADATA, type) ?? []) as Array<{ name?: string }>;
  return schemas[schemas.length - 1]?.name ?? type.name;
}

/** Every class class-validator holds rules of its own for (the DTOs of request bodies and forms). */
function validatedClasses(): Function[] {
  const storage = getMetadataStorage() as unknown as { validationMetadatas?: unknown };
  const byTarget = storage.validationMetadatas;
  if (!(byTarget instanceof Map)) throw new Error('class-validator metadata storage has an unexpected shape: cannot document the validation rules');
  return [...byTarget.keys()].filter((target): target is Function => typeof target === 'function');
}

/**
 * Writes into the component schema of each DTO the rules of the class-validator decorators the
 * Swagger plugin cannot state ({@link RULES}: `IsNotEmpty` on a string → `minLength: 1`; `Matches`
 * without a pattern in the schema → `pattern`), so that the document is as strict as the
 * validators (README.md#api-documentation-and-clients: every length and pattern rule). Rules with
 * `each: true` go to the array's `items`; inherited rules (base classes, `PartialType`) count, for
 * each class class-validator holds rules of its own for. A `$ref` or `allOf` property is left
 * alone. `schemas` is changed in place; nothing is thrown for a DTO without a schema.
 */
export function applyValidationRules(schemas: Record<string, Json>): void {
  const storage = getMetadataStorage();
  for (const type of validatedClasses()) {
    const schema = schemas[schemaNameOf(type)];
    if (!schema?.properties) continue;
    const metadatas = storage.getTargetValidationMetadatas(type, '', true, false);
    for (const metadata of metadatas) {
      const rule = RULES[constraintName(metadata)];
      const property: Json | undefined = schema.properties[metadata.propertyName];
      if (!rule || !property || property.$ref || property.allOf) continue;
      const target: Json | undefined = metadata.each ? property.items : property;
      if (!target || target.$ref || target.allOf) continue;
      rule(target, metadata.constraints ?? []);
    }
  }
}
