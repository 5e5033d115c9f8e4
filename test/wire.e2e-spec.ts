import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { bearer, createUser } from './factories/user.factory.js';
import { createTestApp } from './setup/test-app.js';

describe('wire basics (SPEC §1)', () => {
  let app: NestExpressApplication;
  let token: string;

  beforeAll(async () => {
    app = await createTestApp();
    ({ token } = await createUser(app));
  });
  afterAll(async () => {
    await app.close();
  });

  it('runs on the database chosen by the global setup', () => {
    expect(process.env.DATABASE_URL).toMatch(/^(sqlite:.*resource-api-e2e-|postgres)/);
  });

  it('answers an unknown route with 404 ErrorResp', async () => {
    const res = await request(app.getHttpServer()).get('/v1/nothing-here').set('Authorization', bearer(token));
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ error: expect.any(String), code: 'not_found', request_id: expect.any(String) });
  });

  it('answers a known path with an unsupported method with 405 and Allow', async () => {
    const res = await request(app.getHttpServer()).delete('/v1/todos').set('Authorization', bearer(token));
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.body.code).toBe('method_not_allowed');
    const member = await request(app.getHttpServer()).post('/v1/todos/1');
    expect(member.status).toBe(405);
    expect(member.headers.allow).toBe('GET, HEAD, PUT, PATCH, DELETE');
  });
});
