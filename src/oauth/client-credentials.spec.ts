import { describe, expect, it } from '@jest/globals';
import { clientCredentials, normalizeBasic } from './oauth.service.js';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('client credentials (RFC 6749 §2.3.1)', () => {
  it('form-decodes the id and secret of client_secret_basic', () => {
    expect(clientCredentials(basic('oc%5Fabc', 'cs%5Fx+y%3Az'), {})).toEqual({ clientId: 'oc_abc', clientSecret: 'cs_x y:z' });
    expect(normalizeBasic(basic('oc%5Fabc', 'cs%5Fdef'))).toBe(basic('oc_abc', 'cs_def'));
  });

  it('takes client_secret_post from the body', () => {
    expect(clientCredentials(undefined, { client_id: 'oc_a', client_secret: 'cs_b' })).toEqual({ clientId: 'oc_a', clientSecret: 'cs_b' });
    expect(clientCredentials(undefined, { client_id: 'oc_a' })).toEqual({ clientId: 'oc_a', clientSecret: undefined });
  });

  it('refuses two methods at once, malformed Basic and no client at all', () => {
    expect(clientCredentials(basic('a', 'b'), { client_secret: 'c' })).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(clientCredentials(basic('no-colon', '').slice(0, -4), {})).toMatchObject({ status: 401, error: 'invalid_client' });
    expect(clientCredentials(basic('a%ZZ', 'b'), {})).toMatchObject({ status: 401, error: 'invalid_client' });
    expect(clientCredentials(undefined, {})).toMatchObject({ status: 401, error: 'invalid_client' });
  });

  it('leaves anything but Basic as it is', () => {
    expect(normalizeBasic('Bearer abc')).toBe('Bearer abc');
  });
});
