import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** What the URL rules allow, from WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
export interface UrlRules {
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
}

/** A webhook URL that breaks a rule; `message` names `url` and the rule (the 422 detail, or a delivery's `last_error`). */
export class UrlRefusal extends Error {
  override readonly name = 'UrlRefusal';
}

/** A resolver like `dns.lookup(host, { all: true })`, replaceable in tests. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** How long resolving a webhook host may take before the URL counts as unresolvable (ms). */
const RESOLVE_TIMEOUT_MS = 5000;

/** `dns.lookup(hostname, { all: true })` as a promise, at most {@link RESOLVE_TIMEOUT_MS}. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), RESOLVE_TIMEOUT_MS);
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(addresses);
    });
  });

/**
 * True when `address` (IPv4 or IPv6 text) is a public unicast address a webhook may be sent to:
 * not loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16,
 * fe80::/10), multicast, broadcast, unspecified, CGNAT (100.64/10), documentation or otherwise
 * reserved, nor an IPv6 form that embeds an IPv4 address (IPv4-mapped — judged as that IPv4
 * address —, NAT64, 6to4, Teredo). Anything that does not parse is not public.
 */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/**
 * Checks the form of a webhook URL (docs/webhooks.md#url-rules-ssrf): absolute, `https:` (`http:` only with
 * `allowHttp`), a host, no user name or password, no fragment. Returns the parsed URL.
 * @throws UrlRefusal naming the rule broken
 */
export function parseWebhookUrl(text: string, rules: UrlRules): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UrlRefusal('url must be an absolute https URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp)) {
    throw new UrlRefusal(rules.allowHttp ? 'url must be an http or https URL' : 'url must use https');
  }
  if (!url.hostname) throw new UrlRefusal('url must name a host');
  if (url.username || url.password) throw new UrlRefusal('url must not contain credentials');
  if (url.hash) throw new UrlRefusal('url must not have a fragment');
  return url;
}

/**
 * Resolves the host of `url` and checks every address (docs/webhooks.md#url-rules-ssrf): without
 * `allowPrivateNetworks`, a host that resolves to any non-public address ({@link isPublicAddress})
 * is refused, so a name with one public and one private address cannot be used to reach the
 * private one. An IP literal is checked as it is. Returns the checked addresses, to connect to
 * exactly these ({@link pinnedLookup}: a second resolution could answer otherwise, DNS rebinding).
 * @throws UrlRefusal when the host does not resolve or resolves to a refused address
 */
export async function resolveWebhookHost(url: URL, rules: UrlRules, resolver: Resolver = systemResolver): Promise<LookupAddress[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  const family = isIP(host);
  if (family !== 0) addresses = [{ address: host, family }];
  else {
    try {
      addresses = await resolver(host);
    } catch {
      throw new UrlRefusal('url host does not resolve');
    }
    if (addresses.length === 0) throw new UrlRefusal('url host does not resolve');
  }
  if (!rules.allowPrivateNetworks && addresses.some(({ address }) => !isPublicAddress(address))) {
    throw new UrlRefusal('url must not resolve to a loopback, private, link-local, multicast or otherwise non-public address');
  }
  return addresses;
}

/**
 * A `lookup` for `http.request` that answers with `addresses` (already checked) whatever it is
 * asked, so the connection goes to an address that passed {@link resolveWebhookHost}.
 */
export function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean } | number | undefined, callback: (...args: unknown[]) => void) => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    if (all)
      callback(
        null,
        addresses.map(({ address, family }) => ({ address, family })),
      );
    else callback(null, addresses[0].address, addresses[0].family);
  }) as unknown as LookupFunction;
}
