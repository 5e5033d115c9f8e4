import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { chain, type Middleware } from './chain.js';

const req = {} as IncomingMessage;
const res = {} as ServerResponse;

/** Runs `middleware` and resolves with what it handed the outer `next` (`'answered'` when it called neither within a tick). */
function run(middleware: Middleware): Promise<unknown> {
  return new Promise((resolve) => {
    middleware(req, res, (err?: unknown) => resolve(err === undefined ? 'next' : err));
    setTimeout(() => resolve('answered'), 10);
  });
}

describe('chain', () => {
  it('runs the steps in order, then the outer next', async () => {
    const order: number[] = [];
    const step =
      (n: number): Middleware =>
      (_req, _res, next) => {
        order.push(n);
        next();
      };
    await expect(run(chain([step(1), step(2), step(3)]))).resolves.toBe('next');
    expect(order).toEqual([1, 2, 3]);
  });

  it('lets a later step run inside an earlier one (a request context entered with next)', async () => {
    let inside = false;
    const steps: Middleware[] = [
      (_req, _res, next) => {
        inside = true;
        next();
        inside = false;
      },
      (_req, _res, next) => {
        expect(inside).toBe(true);
        next();
      },
    ];
    await expect(run(chain(steps))).resolves.toBe('next');
  });

  it('stops at a step that answers: neither the following steps nor the outer next run', async () => {
    const later: Middleware = () => {
      throw new Error('must not run');
    };
    await expect(run(chain([() => undefined, later]))).resolves.toBe('answered');
  });

  it('hands next(err), a throw and a rejected promise to the outer next and skips the rest', async () => {
    const boom = new Error('boom');
    const never: Middleware = () => {
      throw new Error('must not run');
    };
    await expect(run(chain([(_req, _res, next) => next(boom), never]))).resolves.toBe(boom);
    await expect(
      run(
        chain([
          () => {
            throw boom;
          },
          never,
        ]),
      ),
    ).resolves.toBe(boom);
    await expect(run(chain([() => Promise.reject(boom), never]))).resolves.toBe(boom);
  });
});
