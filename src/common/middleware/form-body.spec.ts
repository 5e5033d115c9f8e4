import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Post, RequestMethod, Version } from '@nestjs/common';
import { FormBody, formBodyRoutes, markFormBody, takesForm } from './form-body.js';

@Controller('oauth')
class FormController {
  @Get('authorize')
  page(): void {}

  @Post('authorize')
  @FormBody()
  consent(): void {}

  @Post('token')
  @FormBody()
  token(): void {}

  @Post('json')
  json(): void {}
}

@Controller({ path: '/things/', version: '2' })
class VersionedController {
  @Post()
  @FormBody()
  create(): void {}

  @Post('one')
  @Version('1')
  @FormBody()
  one(): void {}
}

@Controller('plain')
class PlainController {
  @Post()
  create(): void {}
}

describe('formBodyRoutes', () => {
  it('lists the marked handlers only, as controller path + handler path with their method', () => {
    expect(formBodyRoutes([FormController, PlainController])).toEqual([
      { path: 'oauth/authorize', method: RequestMethod.POST },
      { path: 'oauth/token', method: RequestMethod.POST },
    ]);
  });

  it("keeps the handler's version, else the controller's, and joins the paths without stray slashes", () => {
    expect(formBodyRoutes([VersionedController])).toEqual([
      { path: 'things', method: RequestMethod.POST, version: '2' },
      { path: 'things/one', method: RequestMethod.POST, version: '1' },
    ]);
  });
});

describe('markFormBody', () => {
  it('marks the request it runs for, and only that one', () => {
    const marked = {} as Parameters<typeof markFormBody>[0];
    let called = false;
    markFormBody(marked, {} as Parameters<typeof markFormBody>[1], () => (called = true));
    expect(called).toBe(true);
    expect(takesForm(marked)).toBe(true);
    expect(takesForm({} as Parameters<typeof takesForm>[0])).toBe(false);
  });
});
