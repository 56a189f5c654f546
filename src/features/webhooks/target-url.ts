import { BlockList, isIP } from 'node:net';
import { AppError } from '../../core/errors.ts';

/** What a workspace may point a webhook at (WEBHOOKS_ALLOW_HTTP, WEBHOOKS_ALLOW_PRIVATE_TARGETS). */
export type TargetRules = { allowHttp: boolean; allowPrivateTargets: boolean };

/**
 * Addresses a webhook must not reach unless private targets are allowed: this host, private
 * networks, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254), carrier-grade NAT
 * (Alibaba's metadata at 100.100.100.200), multicast and reserved ranges. Node's BlockList also
 * matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against the IPv4 rules.
 */
const privateRanges = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv6');
}

/** Whether a literal IP address is loopback, private, link-local, metadata or reserved. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Why `url` cannot be a webhook target, or undefined when it can. Only literal addresses are
 * checked here; a host name is checked against its DNS answers at each connection
 * (send-webhook.ts), since what it resolves to can change after creation.
 */
export function targetProblem(url: string, rules: TargetRules): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be an https URL';
  if (parsed.protocol === 'http:' && !rules.allowHttp) return 'must use https (plain http needs WEBHOOKS_ALLOW_HTTP=true)';
  if (parsed.username || parsed.password) return 'must not carry credentials';
  // The URL parser has already normalized 2130706433 or 0x7f.1 to 127.0.0.1; IPv6 keeps brackets.
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!rules.allowPrivateTargets && isPrivateAddress(host)) {
    return `must not point at a loopback, private, link-local or metadata address (${host}); WEBHOOKS_ALLOW_PRIVATE_TARGETS=true allows it`;
  }
  return undefined;
}

/** Throws the spec's 400 when `url` cannot be a webhook target. */
export function assertTarget(url: string, rules: TargetRules): void {
  const problem = targetProblem(url, rules);
  if (problem) throw new AppError('VALIDATION_FAILED', `url ${problem}.`, { errors: [{ path: '/url', message: problem }] });
}
