import { OPERATION_QUERY, type OperationQuery } from '../decorators/operation.decorators.js';

/** Each handler's declared {@link OperationQuery} (null: none), read once. */
const declared = new WeakMap<Function, OperationQuery | null>();

/**
 * The query grammar handler `handler` declares with `@ListOperation`, `@ReadOperation`,
 * `@CreateOperation` or `@ProtocolOperation` (operation.decorators.ts), or null when it declares
 * none (it then takes no query parameter). Looked up once per handler.
 */
export function operationQuery(handler: Function): OperationQuery | null {
  let operation = declared.get(handler);
  if (operation === undefined) {
    operation = (Reflect.getMetadata(OPERATION_QUERY, handler) as OperationQuery | undefined) ?? null;
    declared.set(handler, operation);
  }
  return operation;
}
