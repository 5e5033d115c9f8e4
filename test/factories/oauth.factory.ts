import { createHash, randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { expect } from '@jest/globals';
import request, { type Response } from 'supertest';
import { bearer, type CreatedUser } from './user.factory.js';

/** A registered client as `POST /v1/oauth-clients` returned it. */
export interface RegisteredClient {
  id: number;
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  scopes: string[];
  name: string;
}

/** Registers an OAuth client through the API as `admin`; expects 201. */
export async function registerClient(app: INestApplication, admin: CreatedUser, overrides: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const res = await request(app.getHttpServer())
    .post('/v1/oauth-clients')
    .set('Authorization', bearer(admin.token))
    .send({
      name: 'Todo Sync',
      redirect_uris: ['https://todo-sync.example/callback'],
      scopes: ['todos:read', 'todos:write'],
      confidential: false,
      ...overrides,
    });
  expect(res.status).toBe(201);
  return res.body as RegisteredClient;
}

/** A PKCE pair (RFC 7636): a random verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The `sid=…` cookie pair of a response's Set-Cookie, or undefined. */
export function sidCookie(res: Response): string | undefined {
  const lines = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
  return lines.find((line) => line.startsWith('sid='))?.split(';')[0];
}

/** Signs `user` in with a cookie session (POST /v1/sessions); returns the cookie pair and the CSRF token. */
export async function signIn(app: INestApplication, user: CreatedUser, password = 'password-123'): Promise<{ cookie: string; csrf: string }> {
  const res = await request(app.getHttpServer()).post('/v1/sessions').send({ username: user.user.username, password });
  expect(res.status).toBe(201);
  return { cookie: sidCookie(res) as string, csrf: res.body.csrf_token };
}

/** The hidden fields of the first form of an HTML page (HTML-unescaped). */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(match[1])] = unescape(match[2]);
  return fields;
}

function unescape(text: string): string {
  return text.replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)));
}

/** A form body: repeated values for arrays. */
export function form(fields: Record<string, string | string[] | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
  }
  return params.toString();
}

/** The query parameters of a redirect's Location. */
export function locationParams(res: Response): Record<string, string> {
  expect(res.headers.location).toBeDefined();
  return Object.fromEntries(new URL(res.headers.location as string).searchParams);
}
