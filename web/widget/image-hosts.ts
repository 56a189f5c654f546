/**
 * Which images an answer may show: an experience lists the hosts it trusts (`settings.widget.
 * imageHosts`); any other image stays a link, so that ingested content cannot make every visitor's
 * browser fetch from a host of its choosing.
 */

/**
 * Whether `url` is an image an answer may show: https on the default port, on a listed host
 * (`images.example.com` exactly, `*.example.com` any subdomain of example.com, not example.com
 * itself), and not an SVG file.
 */
export function imageAllowed(url: string | null | undefined, hosts: readonly string[]): boolean {
  if (!url || hosts.length === 0) return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  // An SVG is a document, not a picture: it stays a link like every other media type.
  if (parsed.protocol !== 'https:' || parsed.port !== '' || /\.svgz?$/i.test(parsed.pathname)) return false;
  const host = parsed.hostname;
  return hosts.some((pattern) => (pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern));
}
