import { Injectable, type PipeTransform, type ArgumentMetadata } from '@nestjs/common';
import { badRequest } from '../errors/api-exception.js';

/** Largest id the API accepts: ids are 32-bit integer columns in both databases. */
export const MAX_ID = 2_147_483_647;

/** Parses a positive integer id from text; `undefined` when it is not one (or above {@link MAX_ID}). */
export function parsePositiveInt(text: string): number | undefined {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) return undefined;
  const value = Number(text);
  return value <= MAX_ID ? value : undefined;
}

/**
 * Path-id pipe (docs/wire.md#ids: a path id that is not a positive integer is 400). Takes the raw path
 * segment, returns the id as a number.
 * @throws 400 `bad_request` naming the parameter.
 */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    const id = parsePositiveInt(value);
    const name = metadata.data ?? 'id';
    if (id === undefined) {
      throw badRequest(`${name} must be a positive integer`, [{ field: name, message: `${name} must be a positive integer up to ${MAX_ID}` }]);
    }
    return id;
  }
}
