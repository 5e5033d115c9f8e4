import { describe, expect, it } from '@jest/globals';
import { isPublicAddress, parseWebhookUrl, pinnedLookup, resolveWebhookHost, UrlRefusal } from './webhook-url.js';

const strict = { allowHttp: false, allowPrivateNetworks: false };
const open = { allowHttp: true, allowPrivateNetworks: true };

describe('isPublicAddress (docs/webhooks.md#url-rules-ssrf: no loopback, private, link-local or multicast targets)', () => {
  it('refuses every non-public IPv4 range', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.254',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '0.0.0.0',
      '192.0.2.10',
    ]) {
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
    }
  });

  it('refuses non-public IPv6, IPv4-mapped forms of private IPv4 and embedded-IPv4 prefixes', () => {
    for (const address of [
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:1',
      '2002:a00:1::1',
      '2001:db8::1',
      '[::1]',
      'fe80::1%eth0',
    ]) {
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
    }
  });

  it('accepts public unicast addresses, also IPv4-mapped ones', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
    }
  });

  it('treats what does not parse as not public', () => {
    expect(isPublicAddress('localhost')).toBe(false);
    expect(isPublicAddress('999.1.1.1')).toBe(false);
  });
});

describe('parseWebhookUrl', () => {
  const refusal = (text: string, rules = strict) => {
    try {
      parseWebhookUrl(text, rules);
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(UrlRefusal);
      return (error as Error).message;
    }
  };

  it('accepts an https URL, and http only with WEBHOOK_ALLOW_HTTP', () => {
    expect(parseWebhookUrl('https://hooks.example.com/in?x=1', strict).hostname).toBe('hooks.example.com');
    expect(refusal('http://hooks.example.com/in')).toBe('url must use https');
    expect(parseWebhookUrl('http://hooks.example.com/in', open).protocol).toBe('http:');
  });

  it('refuses other schemes, relative URLs, credentials and fragments, naming url', () => {
    expect(refusal('ftp://hooks.example.com/', open)).toBe('url must be an http or https URL');
    expect(refusal('file:///etc/passwd')).toBe('url must use https');
    expect(refusal('/relative')).toBe('url must be an absolute https URL');
    expect(refusal('https://user:pass@hooks.example.com/')).toBe('url must not contain credentials');
    expect(refusal('https://user@hooks.example.com/')).toBe('url must not contain credentials');
    expect(refusal('https://hooks.example.com/#frag')).toBe('url must not have a fragment');
  });
});

describe('resolveWebhookHost', () => {
  const resolver = (answers: Record<string, string[]>) => async (host: string) => {
    const found = answers[host];
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  it('refuses a host any of whose addresses is not public (a rebinding-prone mixed answer too)', async () => {
    const dns = resolver({ 'mixed.example': ['93.184.216.34', '10.0.0.5'], 'public.example': ['93.184.216.34'], localhost: ['127.0.0.1', '::1'] });
    await expect(resolveWebhookHost(new URL('https://mixed.example/'), strict, dns)).rejects.toThrow(/non-public address/);
    await expect(resolveWebhookHost(new URL('https://localhost/'), strict, dns)).rejects.toThrow(/non-public address/);
    await expect(resolveWebhookHost(new URL('https://public.example/'), strict, dns)).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('checks IP literals without resolving, brackets removed', async () => {
    const never = async () => {
      throw new Error('must not resolve');
    };
    await expect(resolveWebhookHost(new URL('https://[::1]:8443/'), strict, never)).rejects.toThrow(UrlRefusal);
    await expect(resolveWebhookHost(new URL('https://169.254.169.254/latest/meta-data'), strict, never)).rejects.toThrow(UrlRefusal);
    await expect(resolveWebhookHost(new URL('https://127.0.0.1/'), open, never)).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('refuses a host that does not resolve', async () => {
    await expect(resolveWebhookHost(new URL('https://nowhere.invalid/'), strict, resolver({}))).rejects.toThrow('url host does not resolve');
  });
});

describe('pinnedLookup', () => {
  it('answers with the checked addresses whatever is asked, in both callback forms', () => {
    const lookup = pinnedLookup([{ address: '93.184.216.34', family: 4 }]) as unknown as (
      host: string,
      options: object,
      callback: (...args: unknown[]) => void,
    ) => void;
    const calls: unknown[][] = [];
    lookup('evil.example', { all: true }, (...args) => calls.push(args));
    lookup('evil.example', {}, (...args) => calls.push(args));
    expect(calls).toEqual([
      [null, [{ address: '93.184.216.34', family: 4 }]],
      [null, '93.184.216.34', 4],
    ]);
  });
});
