import { getMetadataStorage } from 'class-validator';

type Json = Record<string, any>;

/** One registered validator of a DTO property. */
type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** Where `@ApiSchema()` keeps its options on a class (`DECORATORS.API_SCHEMA` of @nestjs/swagger, not exported by the package). */
const API_SCHEMA_METADATA = 'swagger/apiSchema';

/** The schema keywords one class-validator constraint stands for, merged into a property's schema. */
type Rule = (schema: Json, constraints: any[]) => void;

const atLeast = (key: string, value: number) => (schema: Json) => {
  schema[key] = typeof schema[key] === 'number' ? Math.max(schema[key], value) : value;
};
const atMost = (key: string, value: number) => (schema: Json) => {
  schema[key] = typeof schema[key] === 'number' ? Math.min(schema[key], value) : value;
};

/**
 * What each validator the DTOs use means as OpenAPI 3.0 schema keywords. A bound keeps the
 * strictest of the validators and the `@ApiProperty` (which may state what a pattern implies,
 * e.g. `minLength: 3` beside `^[a-z0-9_]{3,32}$`). Validators without a schema counterpart (custom rules such as the
 * redirect-URI check, `IsDefined`, `ValidateNested`) are described in the property's text instead.
 */
const RULES: Record<string, Rule> = {
  // `IsNotEmpty` refuses "" (and null/undefined): a string must have at least one character
  isNotEmpty: (schema) => {
    if (schema.type === 'string') atLeast('minLength', 1)(schema);
  },
  minLength: (schema, [min]) => atLeast('minLength', Number(min))(schema),
  maxLength: (schema, [max]) => atMost('maxLength', Number(max))(schema),
  isLength: (schema, [min, max]) => {
    atLeast('minLength', Number(min))(schema);
    if (max !== undefined) atMost('maxLength', Number(max))(schema);
  },
  matches: (schema, [pattern, modifiers]) => {
    // a pattern with flags (other than `u`) has no JSON Schema form; the property's text says it
    const flags = pattern instanceof RegExp ? pattern.flags : (modifiers ?? '');
    if (flags.replace('u', '') === '') schema.pattern = pattern instanceof RegExp ? pattern.source : String(pattern);
  },
  isEmail: (schema) => void (schema.format ??= 'email'),
  isUrl: (schema) => void (schema.format ??= 'uri'),
  isDateString: (schema) => void (schema.format = 'date-time'),
  isIso8601: (schema) => void (schema.format = 'date-time'),
  isUuid: (schema) => void (schema.format = 'uuid'),
  min: (schema, [min]) => atLeast('minimum', Number(min))(schema),
  max: (schema, [max]) => atMost('maximum', Number(max))(schema),
  arrayMinSize: (schema, [min]) => atLeast('minItems', Number(min))(schema),
  arrayMaxSize: (schema, [max]) => atMost('maxItems', Number(max))(schema),
  arrayUnique: (schema) => void (schema.uniqueItems = true),
  isIn: (schema, [values]) => void (schema.enum ??= [...values]),
  isInt: (schema) => void (schema.type = 'integer'),
};

/** The constraint's name as class-validator reports it (`isNotEmpty`, `maxLength`, …). */
function constraintName(metadata: ValidationMetadata): string {
  return metadata.name ?? metadata.type;
}

/** The component name the Swagger generator gives a DTO class: its `@ApiSchema` name, else the class name. */
function schemaNameOf(type: Function): string {
  const schemas = (Reflect.getOwnMetadata(API_SCHEMA_METADATA, type) ?? []) as Array<{ name?: string }>;
  return schemas[schemas.length - 1]?.name ?? type.name;
}

/** Every class class-validator holds rules for (the DTOs of request bodies and forms). */
function validatedClasses(): Function[] {
  const storage = getMetadataStorage() as unknown as { validationMetadatas?: unknown };
  const byTarget = storage.validationMetadatas;
  if (!(byTarget instanceof Map)) throw new Error('class-validator metadata storage has an unexpected shape: cannot document the validation rules');
  return [...byTarget.keys()].filter((target): target is Function => typeof target === 'function');
}

/**
 * Writes the rules of the class-validator decorators into the component schema of each DTO
 * (README.md#api-documentation-and-clients: the document is as strict as the validators, every length and pattern rule), for all
 * DTOs at once rather than per class: `IsNotEmpty` on a string → `minLength: 1`; `MinLength`,
 * `MaxLength`, `Length` → `minLength`/`maxLength`; `Matches` → `pattern`; `IsEmail`, `IsUrl`,
 * `IsDateString`, `IsISO8601`, `IsUUID` → `format`; `Min`/`Max` → `minimum`/`maximum`;
 * `ArrayMinSize`/`ArrayMaxSize`/`ArrayUnique` → `minItems`/`maxItems`/`uniqueItems`; `IsIn` →
 * `enum`; `IsInt` → `type: integer`. Rules with `each: true` go to the array's `items`.
 * Inherited rules (`PartialType`, base classes) count. `schemas` is changed in place.
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
