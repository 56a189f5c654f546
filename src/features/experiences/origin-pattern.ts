/**
 * An allowed-origin pattern: `scheme://host[:port]`, where the host may start with `*.` to stand
 * for one or more labels (`https://*.example.com` covers `https://a.example.com` and
 * `https://a.b.example.com`, not `https://example.com`). Patterns are parsed, never turned into
 * regular expressions, so user input cannot change what matching means.
 */
export type OriginPattern = { scheme: 'http:' | 'https:'; wildcard: boolean; host: string; port: string };

const WILDCARD_LABEL = 'lore-wildcard-label';

/** Parses a pattern, or returns a reason it is not one. */
export function parseOriginPattern(pattern: string): OriginPattern | { error: string } {
  const wildcard = /^[a-z]+:\/\/\*\./i.test(pattern);
  if (!wildcard && pattern.includes('*')) return { error: 'a wildcard may only stand as the first label of the host, as in https://*.example.com' };
  let url: URL;
  try {
    url = new URL(wildcard ? pattern.replace('*.', `${WILDCARD_LABEL}.`) : pattern);
  } catch {
    return { error: 'must be an origin such as https://www.example.com' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: 'the scheme must be http or https' };
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    return { error: 'an origin has no path, query, fragment or credentials' };
  }
  const host = wildcard ? url.hostname.slice(WILDCARD_LABEL.length + 1) : url.hostname;
  if (wildcard && !host.includes('.')) return { error: 'a wildcard needs at least two labels after it, as in *.example.com' };
  return { scheme: url.protocol, wildcard, host, port: url.port };
}

/** Whether `origin` (a request's Origin header) matches the pattern: same scheme, port and host. */
export function originMatches(pattern: OriginPattern, origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== pattern.scheme || url.port !== pattern.port) return false;
  if (!pattern.wildcard) return url.hostname === pattern.host;
  return url.hostname.endsWith(`.${pattern.host}`);
}
