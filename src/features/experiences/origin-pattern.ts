/**
 * An allowed-origin pattern: `scheme://host[:port]`, where the host may start with `*.` to stand
 * for one or more labels (`https://*.example.com` covers `https://a.example.com` and
 * `https://a.b.example.com`, not `https://example.com`). Patterns are parsed, never turned into
 * regular expressions, so user input cannot change what matching means.
 */
export type OriginPattern = { scheme: 'http:' | 'https:'; wildcard: boolean; host: string; port: string };

type Origin = { scheme: 'http:' | 'https:'; host: string; port: string };

const WILDCARD_LABEL = 'lore-wildcard-label';

// RFC 1123 labels. WHATWG URL parsing accepts far more (`*`, empty labels, percent-decoded
// characters), which would let a pattern or an Origin header such as `https://*.example.com` or
// `https://.example.com` slip past a suffix comparison.
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function isHostName(host: string): boolean {
  if (host.startsWith('[')) return true; // an IPv6 literal, already validated by the URL parser
  return host.split('.').every((label) => DNS_LABEL.test(label));
}

/** Parses `scheme://host[:port]` with the URL parser's normalization (case, default ports, IDN). */
function parseOrigin(text: string): Origin | { error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: 'must be an origin such as https://www.example.com' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: 'the scheme must be http or https' };
  // A bare `?` or `#` leaves url.search and url.hash empty, hence the look at the raw text.
  if (url.username || url.password || /[?#]/.test(text) || url.pathname !== '/') {
    return { error: 'an origin has no path, query, fragment or credentials' };
  }
  if (!isHostName(url.hostname)) return { error: `${url.hostname} is not a valid host name` };
  return { scheme: url.protocol, host: url.hostname, port: url.port };
}

/** Parses a pattern, or returns a reason it is not one. */
export function parseOriginPattern(pattern: string): OriginPattern | { error: string } {
  const wildcard = /^[a-z]+:\/\/\*\./i.test(pattern);
  const rest = wildcard ? pattern.replace('*.', '') : pattern;
  if (rest.includes('*')) return { error: 'a wildcard may only stand as the first label of the host, as in https://*.example.com' };
  const parsed = parseOrigin(wildcard ? pattern.replace('*.', `${WILDCARD_LABEL}.`) : pattern);
  if ('error' in parsed) return parsed;
  const host = wildcard ? parsed.host.slice(WILDCARD_LABEL.length + 1) : parsed.host;
  if (wildcard && !host.includes('.')) return { error: 'a wildcard needs at least two labels after it, as in *.example.com' };
  return { ...parsed, wildcard, host };
}

/**
 * Whether `origin` (a request's Origin header) matches the pattern: same scheme, port and host.
 * Anything that is not a well-formed http(s) origin, such as the opaque `null`, matches nothing.
 */
export function originMatches(pattern: OriginPattern, origin: string): boolean {
  const parsed = parseOrigin(origin);
  if ('error' in parsed) return false;
  if (parsed.scheme !== pattern.scheme || parsed.port !== pattern.port) return false;
  if (!pattern.wildcard) return parsed.host === pattern.host;
  return parsed.host.endsWith(`.${pattern.host}`);
}
