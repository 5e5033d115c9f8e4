import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { badRequest } from '../common/errors/api-exception.js';

/** The shape of a public event id: `evt_` and 32 lower-case hex digits. */
export const EVENT_ID_PATTERN = /^evt_[0-9a-f]{32}$/;

/**
 * Path-id pipe of `GET /v{version}/events/{id}` (docs/wire.md#ids: a malformed path id → 400): returns the
 * id when it has the shape `evt_` + 32 lower-case hex digits.
 * @throws 400 `bad_request` naming the parameter (the value itself is not echoed).
 */
@Injectable()
export class ParseEventIdPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    const name = metadata.data ?? 'id';
    if (typeof value !== 'string' || !EVENT_ID_PATTERN.test(value)) {
      throw badRequest(`${name} must be an event id`, [{ field: name, message: `${name} must be evt_ followed by 32 lower-case hex digits` }]);
    }
    return value;
  }
}
