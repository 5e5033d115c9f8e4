import {
  registerDecorator,
  useContainer,
  type ValidationArguments,
  type ValidationOptions,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import type { RegisteredList, ResourceRegistry } from './resource-registry.js';

/** The arguments of the two rules: the list, the values accepted besides it, the noun of one value. */
type Constraints = [list: RegisteredList, also: readonly string[], noun: string];

/**
 * class-validator's rules on the registry's lists (scopes, event types): the registry is the
 * application's, bound by `ResourcesModule` when the application initialises ({@link bindRegistryValidation}).
 */
@ValidatorConstraint({ name: 'isRegistered' })
export class RegisteredValueConstraint implements ValidatorConstraintInterface {
  constructor(private readonly registry?: ResourceRegistry) {}

  /** Each value (`each: true`) is one of `also` or of the list; the array (`arrayMaxRegistered`) has at most as many items as there are choices. */
  validate(value: unknown, args: ValidationArguments): boolean {
    const [list, also] = args.constraints as Constraints;
    const choices = this.choices(list, also);
    return args.constraints.length === 2 ? Array.isArray(value) && value.length <= choices.length : typeof value === 'string' && choices.includes(value);
  }

  /** `each scope must be one of todos:read, …`, or `scopes must contain no more than 15 elements`. */
  defaultMessage(args: ValidationArguments): string {
    const [list, also, noun] = args.constraints as Constraints;
    const choices = this.choices(list, also);
    return args.constraints.length === 2
      ? `${args.property} must contain no more than ${choices.length} elements`
      : `each ${noun} must be one of ${choices.join(', ')}`;
  }

  private choices(list: RegisteredList, also: readonly string[]): string[] {
    if (!this.registry)
      throw new Error(`no resource registry to validate ${list} against: ResourcesModule binds the application's on initialisation (bindRegistryValidation)`);
    return [...also, ...this.registry.list(list)];
  }
}

/**
 * The value is one of `also` or of the registry's `list` (with `each: true`, every item is);
 * fails as `each <noun> must be one of …` (422, as `@IsIn` does).
 */
export function IsRegistered(list: RegisteredList, noun: string, options: ValidationOptions & { also?: readonly string[] } = {}): PropertyDecorator {
  const { also = [], ...validation } = options;
  return (target, propertyName) =>
    registerDecorator({
      name: 'isRegistered',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [list, also, noun],
      options: validation,
      validator: RegisteredValueConstraint,
    });
}

/** The array has at most as many items as `also` and the registry's `list` have values (422, as `@ArrayMaxSize` does). */
export function ArrayMaxRegistered(list: RegisteredList, also: readonly string[] = []): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'arrayMaxRegistered',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [list, also],
      options: {},
      validator: RegisteredValueConstraint,
    });
}

/**
 * Makes the rules above validate against `registry`: class-validator takes their constraint from
 * this container (its other rules from its own). Process-wide, as class-validator's container is:
 * the application initialised last is the one validated against.
 */
export function bindRegistryValidation(registry: ResourceRegistry): void {
  const constraint = new RegisteredValueConstraint(registry);
  useContainer({ get: (type: unknown) => (type === RegisteredValueConstraint ? constraint : undefined) } as Parameters<typeof useContainer>[0], {
    fallback: true,
    fallbackOnErrors: true,
  });
}
