import { describe, expect, it } from '@jest/globals';
import { verificationLink, verificationMailText } from '../auth/email-verifications.service.js';
import { newMailToken, resetLink, resetMailText } from '../auth/password-resets.service.js';
import { sha256 } from '../auth/hashing.js';
import { CENSOR, redactText } from '../logging/logging.js';
import { messageIdDomain } from './mail-outbox.js';
import { classifySendError, fileName } from './mail-transport.js';
import { dueMailSql } from './mail-worker.js';

describe('classifySendError: retry or give up, with a reason safe to store and log', () => {
  it('a 5xx refusal of the envelope or the message is permanent', () => {
    expect(classifySendError(Object.assign(new Error('550 5.1.1 <ada@example.com>: unknown'), { responseCode: 550, code: 'EENVELOPE' }))).toEqual({
      permanent: true,
      reason: 'SMTP 550 EENVELOPE',
    });
    expect(classifySendError({ responseCode: 554, code: 'EMESSAGE' }).permanent).toBe(true);
  });

  it('a 4xx, a refused connection, a timeout or a failed login is retried', () => {
    expect(classifySendError({ responseCode: 451, code: 'EENVELOPE' })).toEqual({ permanent: false, reason: 'SMTP 451 EENVELOPE' });
    expect(classifySendError({ code: 'ECONNECTION' })).toEqual({ permanent: false, reason: 'ECONNECTION' });
    expect(classifySendError({ responseCode: 535, code: 'EAUTH' }).permanent).toBe(false);
    expect(classifySendError(new Error('boom'))).toEqual({ permanent: false, reason: 'send failed' });
  });

  it('never carries the server text (it can quote the address)', () => {
    const { reason } = classifySendError({ responseCode: 550, code: 'EENVELOPE', message: 'ada@example.com rejected', response: 'ada@example.com' });
    expect(reason).not.toContain('@');
    expect(classifySendError({ code: 'weird code with ada@example.com' }).reason).toBe('send failed');
  });
});

describe('dueMailSql', () => {
  it('PostgreSQL: pending or lease-expired sending mail, oldest first, locked and skipping locked rows', () => {
    const sql = dueMailSql(true, 4);
    expect(sql).toContain("status IN ('pending', 'sending') AND next_attempt_at <= $1");
    expect(sql).toMatch(/ORDER BY next_attempt_at, id LIMIT 4 FOR UPDATE SKIP LOCKED$/);
  });

  it('SQLite: each status its own range of the index, one parameter', () => {
    const sql = dueMailSql(false, 2.7);
    expect(sql.match(/\?/g)).toHaveLength(1);
    expect(sql).toContain("status = 'pending'");
    expect(sql).toContain("status = 'sending'");
    expect(sql).toMatch(/LIMIT 2$/);
  });
});

describe('Message-ID and .eml names', () => {
  it('the domain of MAIL_FROM, localhost without one', () => {
    expect(messageIdDomain('Example <no-reply@Mail.Example.com>')).toBe('mail.example.com');
    expect(messageIdDomain('no-reply@example.org')).toBe('example.org');
    expect(messageIdDomain('nobody')).toBe('localhost');
  });

  it('a file name of the Message-ID, without brackets or path characters', () => {
    expect(fileName('<3f2c9a1e-aaaa@example.com>')).toBe('3f2c9a1e-aaaa@example.com');
    expect(fileName('<../x/y@z>')).toBe('.._x_y@z');
  });
});

describe('tokens and links of the mails', () => {
  it('a token is 43 base64url characters (32 random bytes), stored as its SHA-256 hex', () => {
    const a = newMailToken();
    const b = newMailToken();
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.hash).toBe(sha256(a.token));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.token).not.toBe(b.token);
  });

  it('the link carries the token in the fragment, never the query', () => {
    const link = resetLink('https://app.example.com/base', 'abc_-1');
    expect(link).toBe('https://app.example.com/base/reset-password#token=abc_-1');
    expect(new URL(link).search).toBe('');
    expect(resetMailText(link, 30)).toContain(`\n${link}\n`);
    expect(resetMailText(link, 30)).toContain('within 30 minutes');
  });

  it('the verification link too; its mail says how many hours it works', () => {
    const link = verificationLink('https://app.example.com/base', 'abc_-1');
    expect(link).toBe('https://app.example.com/base/verify-email#token=abc_-1');
    expect(new URL(link).search).toBe('');
    expect(verificationMailText(link, 24)).toContain(`\n${link}\n`);
    expect(verificationMailText(link, 24)).toContain('within 24 hours');
    expect(verificationMailText(link, 1)).toContain('within 1 hour:');
  });
});

describe('redactText: e-mail addresses never reach a log line', () => {
  it('censors an address in free text, keeping the rest', () => {
    expect(redactText('550 5.1.1 <ada.l+x@mail.example.com>: Recipient address rejected')).toBe(`550 5.1.1 <${CENSOR}>: Recipient address rejected`);
    expect(redactText('mail 12 sent')).toBe('mail 12 sent');
    expect(redactText('smtp://user:pw@mail.example.com:587')).toBe(`smtp://user:${CENSOR}@mail.example.com:587`);
  });
});
