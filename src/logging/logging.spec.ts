import { CENSOR, redactFields } from './logging.js';

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
