import type { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { type DiscoveryService, MetadataScanner } from '@nestjs/core';

/** A route's handler and the controller declaring it. */
export interface RouteHandler {
  handler: Function;
  controller: Type;
}

/** The route handlers of `controller`: the methods (Nest's {@link MetadataScanner}, as the router reads them) that carry a route (`@Get()`, `@Post()`, …). */
export function routeHandlers(controller: Type): Function[] {
  const prototype = controller.prototype as Record<string, unknown>;
  return new MetadataScanner()
    .getAllMethodNames(prototype)
    .map((name) => prototype[name])
    .filter((handler): handler is Function => typeof handler === 'function' && Reflect.hasMetadata(PATH_METADATA, handler));
}

/** The application's controllers, as `discovery` finds them. */
export function applicationControllers(discovery: DiscoveryService): Type[] {
  return discovery
    .getControllers()
    .map((wrapper) => wrapper.metatype)
    .filter((metatype): metatype is Type => !!metatype);
}

/** Every route handler of the application with its controller. */
export function applicationRoutes(discovery: DiscoveryService): RouteHandler[] {
  return applicationControllers(discovery).flatMap((controller) => routeHandlers(controller).map((handler) => ({ handler, controller })));
}
