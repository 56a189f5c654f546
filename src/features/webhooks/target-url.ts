import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../core/errors.ts';

/**
 * What a workspace may point a webhook (or an experience tool) at, and the settings that allow
 * more, named in refusals (default WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOW_PRIVATE_TARGETS).
 */
export type TargetRules = { allowHttp: boolean; allowPrivateTargets: boolean; settings?: { http: string; privateTargets: string } };

const webhookSettings = { http: 'WEBHOOKS_ALLOW_HTTP', privateTargets: 'WEBHOOKS_ALLOW_PRIVATE_TARGETS' };

/** IPv4-compatible addresses (::a.b.c.d, deprecated by RFC 4291), which ipaddr.js counts as unicast. */
const ipv4Compatible = ipaddr.parseCIDR('::/96');

/**
 * The IPv4 addresses an IPv6 address carries, by its range in ipaddr.js: IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96) and NAT64 (64:ff9b::/96, and 64:ff9b:1::/48
 * in the /96 layout DNS64 synthesizes) in their last 32 bits; 6to4 (2002::/16) in bits 16-47;
 * Teredo (2001::/32) its server's in bits 32-63 and its client's, inverted, in the last 32; and
 * IPv4-compatible ones (::/96 beyond :: and ::1) in their last 32 bits.
 */
function carriedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  const at = (offset: number, inverted = false) => new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((byte) => (inverted ? byte ^ 0xff : byte)));
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return [at(12)];
  if (range === '6to4') return [at(2)];
  if (range === 'teredo') return [at(4), at(12, true)];
  return range === 'unicast' && address.match(ipv4Compatible) ? [at(12)] : [];
}

/**
 * How a literal IP address that a webhook must not reach unless private targets are allowed is
 * named in a refusal, or undefined when it may be reached (or is not an address). Refused: every
 * address ipaddr.js does not class as unicast, which covers this host, private networks,
 * link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254), carrier-grade NAT (Alibaba's
 * metadata at 100.100.100.200), multicast, documentation and reserved ranges. An IPv6 address that
 * carries an IPv4 address is judged by the address it carries, so that 64:ff9b::7f00:1 is refused
 * as 127.0.0.1 is while the NAT64 form of a public address, which DNS64 answers for every
 * IPv4-only name on an IPv6-only host, is not. The same judgement applies to DNS answers at
 * delivery (send-webhook.ts).
 */
export function privateAddress(address: string): string | undefined {
  if (isIP(address) === 0) return undefined;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast' ? undefined : address;
  const carried = carriedIPv4(parsed as ipaddr.IPv6);
  if (carried.length === 0) return parsed.range() === 'unicast' ? undefined : address;
  const refused = carried.find((ipv4) => ipv4.range() !== 'unicast');
  return refused && `${address}, which carries ${refused.toString()}`;
}

/** Whether a literal IP address is loopback, private, link-local, metadata or reserved. */
export function isPrivateAddress(address: string): boolean {
  return privateAddress(address) !== undefined;
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
  const settings = rules.settings ?? webhookSettings;
  if (parsed.protocol === 'http:' && !rules.allowHttp) return `must use https (plain http needs ${settings.http}=true)`;
  if (parsed.username || parsed.password) return 'must not carry credentials';
  // The URL parser has already normalized 2130706433 or 0x7f.1 to 127.0.0.1; IPv6 keeps brackets.
  const refused = rules.allowPrivateTargets ? undefined : privateAddress(parsed.hostname.replace(/^\[|\]$/g, ''));
  if (refused) return `must not point at a loopback, private, link-local or metadata address (${refused}); ${settings.privateTargets}=true allows it`;
  return undefined;
}

/** Throws the spec's 400 when `url` cannot be a webhook target. */
export function assertTarget(url: string, rules: TargetRules): void {
  const problem = targetProblem(url, rules);
  if (problem) throw new AppError('VALIDATION_FAILED', `url ${problem}.`, { errors: [{ path: '/url', message: problem }] });
}
