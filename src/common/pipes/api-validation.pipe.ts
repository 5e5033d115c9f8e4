import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import { readOnlyPropertiesOf } from '../decorators/validation.decorators.js';
import { badRequest, notAcceptedProperty, validationFailed, type ErrorDetail } from '../errors/api-exception.js';

/**
 * Constraints whose failure means the request is not well-formed (→ 400, docs/errors.md#400-or-422): presence
 * (missing, `null`, empty string), JSON type, and properties the operation does not accept.
 * Every other constraint is a value rule (→ 422).
 */
export const PRESENCE_AND_TYPE_CONSTRAINTS = new Set([
  'isDefined',
  'isNotEmpty',
  'whitelistValidation',
  'isString',
  'isInt',
  'isNumber',
  'isBoolean',
  'isArray',
  'isObject',
  'nestedValidation',
  'notNull',
]);

const PRESENCE_CONSTRAINTS = new Set(['isDefined', 'isNotEmpty', 'notNull']);

/** Read-only properties a client got from a GET; accepted and ignored in every write body (docs/writes.md#read-only-and-unknown-fields). */
export const READ_ONLY_PROPERTIES = ['id', 'created_at', 'updated_at', 'links'];

interface Classified {
  badRequest: ErrorDetail[];
  invalid: ErrorDetail[];
}

/**
 * Flattens class-validator errors into details with paths like `items[0].sku`, split 400 / 422. An
 * absent required property (the error's `value` is undefined) is always `<field> is required`
 * (400), whatever validators failed on it; otherwise a presence failure is named before a type
 * failure, and the first remaining rule gives a 422 message.
 */
export function classifyValidationErrors(errors: ValidationError[], parent = '', out: Classified = { badRequest: [], invalid: [] }): Classified {
  for (const error of errors) {
    const field = parent === '' ? error.property : /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
    const constraints = Object.entries(error.constraints ?? {});
    if (constraints.length > 0) {
      // an absent property fails only where it is required (optional ones skip validation when
      // absent): whichever validators it has (IsArray, IsString, …), it is reported as missing
      const absent = Object.hasOwn(error, 'value') && error.value === undefined && !constraints.some(([name]) => name === 'whitelistValidation');
      const structural = absent
        ? (['isDefined', ''] as [string, string])
        : (constraints.find(([name]) => PRESENCE_CONSTRAINTS.has(name)) ?? constraints.find(([name]) => PRESENCE_AND_TYPE_CONSTRAINTS.has(name)));
      if (structural) {
        out.badRequest.push({ field, message: messageFor(field, structural[0], structural[1]) });
      } else {
        const message = constraints[0][1];
        // name the full path (items[1].quantity) where class-validator names only the property
        out.invalid.push({ field, message: message.startsWith(`${error.property} `) ? field + message.slice(error.property.length) : message });
      }
    }
    if (error.children?.length) classifyValidationErrors(error.children, field, out);
  }
  return out;
}

function messageFor(field: string, constraint: string, message: string): string {
  if (constraint === 'isDefined' || constraint === 'isNotEmpty' || constraint === 'notNull') return `${field} is required`;
  if (constraint === 'whitelistValidation') return notAcceptedProperty(field).message;
  return message.replace(/^\S+/, field);
}

/**
 * The global validation pipe for request bodies (docs/errors.md#400-or-422). Takes the parsed JSON body and the
 * handler's DTO class; returns a DTO instance holding only declared properties. Read-only
 * properties (`id`, `created_at`, `updated_at`, `links`, and the DTO's `@ReadOnlyProperty()` ones
 * such as owner fields) are dropped first.
 * @throws 400 `bad_request` when the body is absent, a field is missing/`null`/empty, of the wrong
 *   JSON type, or not accepted; 422 `validation_failed` when values break rules. `details` lists
 *   every failing field; when both kinds occur the status is 400 and all are listed.
 */
@Injectable()
export class ApiValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype;
    if (metadata.type !== 'body' || !metatype || !isDtoClass(metatype)) return value;
    if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw badRequest('request body must be a JSON object');
    }
    const body = { ...(value as Record<string, unknown>) };
    for (const key of READ_ONLY_PROPERTIES) delete body[key];
    for (const key of readOnlyPropertiesOf(metatype)) delete body[key];
    const instance = plainToInstance(metatype, body, { enableImplicitConversion: false, exposeDefaultValues: false }) as object;
    // class-transformer silently skips names it finds on the DTO's prototype, so the whitelist
    // never sees them; they are not accepted either (docs/writes.md#read-only-and-unknown-fields). `__proto__`, `constructor`,
    // `prototype` and the other Object.prototype names are refused at any depth before this, by
    // the WireMiddleware (input-rules.ts); this catches the DTO's own accessors and methods.
    const skipped = Object.keys(body)
      .filter((key) => !Object.hasOwn(instance, key))
      .map(notAcceptedProperty);
    const errors = await validate(instance, {
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      // the value tells an absent property (→ "<field> is required") from a present wrong one
      validationError: { target: false, value: true },
    });
    if (errors.length === 0 && skipped.length === 0) return instance;
    const { badRequest: structural, invalid } = classifyValidationErrors(errors);
    structural.push(...skipped);
    if (structural.length > 0) {
      const details = [...structural, ...invalid];
      throw badRequest(details.length === 1 ? details[0].message : `${details.length} fields are invalid`, details);
    }
    throw validationFailed(invalid);
  }
}

const PRIMITIVES = new Set<unknown>([String, Boolean, Number, Array, Object]);

function isDtoClass(metatype: unknown): metatype is new () => object {
  return typeof metatype === 'function' && !PRIMITIVES.has(metatype);
}
