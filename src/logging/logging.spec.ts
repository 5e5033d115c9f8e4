import { CENSOR, MAX_USER_AGENT, redactFields, requestLine } from './logging.js';

describe('redactFields', () => {
  it('censors secret fields at the top level and one level down, copying only what changes', () => {
    const inner = { password: 'hunter2', name: 'ann' };
    const object = { msg: 'x', token: 'abc', user: inner, list: [1, 2], deep: { a: { password: 'kept two levels down' } } };
    const out = redactFields(object);
    expect(out).toEqual({ msg: 'x', token: CENSOR, user: { password: CENSOR, name: 'ann' }, list: [1, 2], deep: { a: { password: 'kept two levels down' } } });
    expect(object.token).toBe('abc');
    expect(inner.password).toBe('hunter2');
  });

  it('returns the very object when nothing matches, and leaves req, res and err to their serializers', () => {
    const object = { req: { query: { a: '1' } }, res: { statusCode: 200 }, err: { parameters: [] }, responseTime: 3 };
    expect(redactFields(object)).toBe(object);
  });

  it('censors webhook signing secrets (secret, previous_secret) wherever a logged object carries them', () => {
    expect(redactFields({ webhook: { id: 1, secret: 'whsec_x', previous_secret: 'whsec_y' }, secret: 'whsec_z' })).toEqual({
      webhook: { id: 1, secret: CENSOR, previous_secret: CENSOR },
      secret: CENSOR,
    });
  });

  it('censors driverError and query of a logged error-like object', () => {
    expect(redactFields({ error: { message: 'm', query: 'SELECT 1', driverError: { detail: 'd' } } })).toEqual({
      error: { message: 'm', query: CENSOR, driverError: CENSOR },
    });
  });
});

describe('requestLine (docs/operations.md#logs: the request as its line shows it)', () => {
  const request = (headers: Record<string, string>, url = '/v1/todos?status=done&access_token=abc') =>
    Object.assign(Object.create(null) as object, { id: 'r1', method: 'GET', url, originalUrl: url, ip: '203.0.113.7', headers, socket: {} }) as never;

  it('keeps id, method, redacted URL, client address and user agent; no header map, so no credential header', () => {
    const line = requestLine(
      request({ authorization: 'Bearer secret-token', cookie: 'sid=secret-cookie', 'user-agent': 'curl/8.0', 'x-api-key': 'rk_secret' }),
    );
    expect(line).toEqual({
      id: 'r1',
      method: 'GET',
      url: '/v1/todos?status=done&access_token=[REDACTED]',
      client_address: '203.0.113.7',
      user_agent: 'curl/8.0',
    });
    expect(JSON.stringify(line)).not.toMatch(/secret/);
  });

  it('cuts a long user agent and leaves out a missing one', () => {
    expect(requestLine(request({ 'user-agent': 'a'.repeat(5000) })).user_agent).toBe('a'.repeat(MAX_USER_AGENT));
    expect(requestLine(request({}))).not.toHaveProperty('user_agent');
  });
});
