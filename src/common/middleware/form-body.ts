import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod, SetMetadata, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, VERSION_METADATA } from '@nestjs/common/constants.js';
import type { RouteInfo } from '@nestjs/common/internal';
import { MetadataScanner } from '@nestjs/core';

/** Metadata key of {@link FormBody}. */
export const FORM_BODY = 'resource-api:form-body';

/**
 * Marks a POST operation whose body is `application/x-www-form-urlencoded` instead of JSON
 * (docs/wire.md#request-bodies: the OAuth token, revocation, consent and sign-in endpoints): on
 * its route the WireMiddleware accepts and parses only that media type (at most 100 parameters).
 */
export const FormBody = () => SetMetadata(FORM_BODY, true);

/** Where {@link markFormBody} records that a request was routed to a {@link FormBody} operation. */
const TAKES_FORM = Symbol.for('resource-api.takes-form');

/** Whether {@link markFormBody} ran for `req`: its route is a {@link FormBody} operation. */
export function takesForm(req: IncomingMessage): boolean {
  return (req as IncomingMessage & { [TAKES_FORM]?: boolean })[TAKES_FORM] === true;
}

/** Middleware bound to the routes of {@link formBodyRoutes}, before the WireMiddleware: records {@link takesForm}. */
export function markFormBody(req: IncomingMessage, _res: ServerResponse, next: () => void): void {
  (req as IncomingMessage & { [TAKES_FORM]?: boolean })[TAKES_FORM] = true;
  next();
}

/**
 * The routes of the handlers marked {@link FormBody} among `controllers`, as `forRoutes()` takes
 * them (controller path + handler path, method, the handler's or controller's version if any):
 * Nest then mounts them as the router serves them (version prefixes included), on the same
 * Express application, so a request is marked exactly when the router gives it to the operation:
 * case-insensitively, with or without one trailing slash, after the version chosen by `Accept` or
 * the subdomain is put in the path (docs/wire.md#paths: `POST /v1/OAuth/Token` takes a form too).
 */
export function formBodyRoutes(controllers: Type[]): RouteInfo[] {
  const scanner = new MetadataScanner();
  const routes: RouteInfo[] = [];
  for (const controller of controllers) {
    const prefixes = [(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined) ?? ''].flat();
    for (const name of scanner.getAllMethodNames(controller.prototype)) {
      const handler = controller.prototype[name] as Function;
      if (Reflect.getMetadata(FORM_BODY, handler) !== true) continue;
      const method = (Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined) ?? RequestMethod.GET;
      const version = Reflect.getMetadata(VERSION_METADATA, handler) ?? Reflect.getMetadata(VERSION_METADATA, controller);
      const paths = [(Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined) ?? ''].flat();
      for (const prefix of prefixes) {
        for (const path of paths) {
          const joined = [prefix, path]
            .map((part) => part.replace(/^\/+|\/+$/g, ''))
            .filter((part) => part !== '')
            .join('/');
          routes.push({ path: joined, method, ...(version !== undefined ? { version } : {}) });
        }
      }
    }
  }
  return routes;
}
