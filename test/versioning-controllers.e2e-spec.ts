import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Module } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { enableApiVersioning } from '../src/common/versioning/api-versions.js';

/**
 * The versioning mechanism for controllers to come ("new controllers get /v1 and /v2
 * with zero or one line of change"), on a bare application with stand-in controllers: a plain
 * controller is served under every version, an operational one (`health`) stays unversioned, and a
 * controller that writes the version into its path is refused at start-up.
 */

@Controller('gadgets')
class GadgetsController {
  @Get()
  list(): { ok: true } {
    return { ok: true };
  }
}

@Controller('health')
class HealthStandInController {
  @Get('live')
  live(): { status: string } {
    return { status: 'up' };
  }
}

@Controller('v1/widgets')
class LiteralVersionController {
  @Get()
  list(): { ok: true } {
    return { ok: true };
  }
}

@Module({ controllers: [GadgetsController, HealthStandInController] })
class FutureModule {}

@Module({ controllers: [LiteralVersionController] })
class LiteralModule {}

describe('enableApiVersioning: controllers added later', () => {
  let app: NestExpressApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [FutureModule] }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    enableApiVersioning(app);
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('serves a controller without a version under /v1 and /v2, and not unprefixed', async () => {
    for (const url of ['/v1/gadgets', '/v2/gadgets'])
      expect({ url, status: (await request(app.getHttpServer()).get(url)).status }).toEqual({ url, status: 200 });
    expect((await request(app.getHttpServer()).get('/gadgets')).status).toBe(404);
  });

  it('keeps an operational controller (health) unversioned', async () => {
    expect((await request(app.getHttpServer()).get('/health/live')).body).toEqual({ status: 'up' });
    for (const url of ['/v1/health/live', '/v2/health/live'])
      expect({ url, status: (await request(app.getHttpServer()).get(url)).status }).toEqual({ url, status: 404 });
  });

  it('refuses a controller path that carries a version, naming the controller and the fix', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [LiteralModule] }).compile();
    const literal = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    try {
      expect(() => enableApiVersioning(literal)).toThrow("LiteralVersionController: controller path 'v1/widgets' carries a version; write 'widgets'");
    } finally {
      await literal.close();
    }
  });
});
