import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, type ServerProcess, startServer } from './setup/server-process.js';

/** One HTTPS request trusting only `ca`; resolves with status, headers and the JSON body. */
function httpsJson(url: string, ca: Buffer, method = 'GET', body?: object): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(
      url,
      { method, ca, headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('HTTPS served by the process itself with TLS_CERT/TLS_KEY (docs/operations.md#tls)', () => {
  let dir: string;
  let server: ServerProcess;
  let cert: Buffer;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(path.join(dir, 'cert.pem'));
    server = await startServer(dir, { TLS_CERT: path.join(dir, 'cert.pem'), TLS_KEY: path.join(dir, 'key.pem') });
  }, 300_000);
  afterAll(async () => {
    await server?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('logs an https:// address', () => {
    expect(server.url).toBe(`https://localhost:${server.port}`);
  });

  it('GET /health/live over HTTPS, verified against the self-signed certificate', async () => {
    const res = await httpsJson(`${server.url}/health/live`, cert);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('a /v1 operation over HTTPS: POST /v1/users → 201 with Location', async () => {
    const res = await httpsJson(`${server.url}/v1/users`, cert, 'POST', { username: 'tls_user', password: 'correct-horse-1', name: 'TLS User' });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v1/users/${res.body.id}`);
    expect(res.body).toMatchObject({ username: 'tls_user', name: 'TLS User' });
  });

  it('refuses a client that does not trust the certificate', async () => {
    await expect(httpsJson(`${server.url}/health/live`, Buffer.from(''))).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
  });

  it('speaks no plain HTTP on the TLS port', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = http.get(`http://localhost:${server.port}/health/live`, (res) => {
        res.resume();
        resolve(`status ${res.statusCode}`);
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(outcome).not.toBe('status 200');
  });
});

describe('TLS configuration errors stop start-up with one line (docs/operations.md#configuration)', () => {
  let dir: string;

  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-tls-bad-'));
  }, 300_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    [
      { TLS_CERT: '/nonexistent/cert.pem' },
      'resource-api failed to start: Invalid configuration: TLS_CERT and TLS_KEY must be set together (file paths of a PEM certificate and its key)\n',
    ],
    [
      { TLS_CERT: '/nonexistent/cert.pem', TLS_KEY: '/nonexistent/key.pem' },
      'resource-api failed to start: Invalid configuration: TLS_CERT file "/nonexistent/cert.pem" cannot be read (ENOENT)\n',
    ],
  ])('%j → exit 1 with one line', async (env, message) => {
    const failed = await startServer(dir, env, 30_000).then(
      async (server) => {
        await server.kill();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(failed).toContain('server exited before writing');
    expect(failed.endsWith(message) || failed.includes(`\n${message}`)).toBe(true);
  });
});
