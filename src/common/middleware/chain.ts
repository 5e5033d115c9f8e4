import type { IncomingMessage, ServerResponse } from 'node:http';

/** A Connect-style middleware: calls `next()` to go on, `next(err)` to fail, or answers and calls neither. */
export type Middleware<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = (
  req: Req,
  res: Res,
  next: (err?: unknown) => void,
) => unknown;

/**
 * The `middlewares` as one middleware, run in order: each step's `next()` starts the following
 * one, the last one's calls the outer `next`; `next(err)`, a throw or a rejected promise hands the
 * error to the outer `next` (as Express' router does); a step that answers and calls neither
 * ends the chain. Registered once (`app.use(chain(…))`), the steps cost a function call each
 * instead of a pass of the router over one layer per middleware (docs/wire.md#responses: the
 * order of the steps is the order the service applies its rules in).
 */
export function chain<Req extends IncomingMessage, Res extends ServerResponse>(middlewares: ReadonlyArray<Middleware<Req, Res>>): Middleware<Req, Res> {
  const steps = [...middlewares];
  if (steps.length === 1) return steps[0];
  return (req, res, done) => {
    let index = 0;
    const fail = (err: unknown): void => done(err ?? new Error('middleware failed'));
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return fail(err);
      if (index === steps.length) return done();
      const step = steps[index++];
      try {
        const result = step(req, res, next);
        if (result instanceof Promise) result.catch(fail);
      } catch (error) {
        fail(error);
      }
    };
    next();
  };
}
