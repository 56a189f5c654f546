import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { originMatches, parseOriginPattern, type OriginPattern } from './origin-pattern.ts';

function parsed(pattern: string): OriginPattern {
  const result = parseOriginPattern(pattern);
  if ('error' in result) throw new Error(`${pattern} should parse: ${result.error}`);
  return result;
}

describe('parseOriginPattern', () => {
  const valid: Array<[string, OriginPattern]> = [
    ['https://www.example.com', { scheme: 'https:', wildcard: false, host: 'www.example.com', port: '' }],
    ['http://localhost:3000', { scheme: 'http:', wildcard: false, host: 'localhost', port: '3000' }],
    ['https://a.com:443', { scheme: 'https:', wildcard: false, host: 'a.com', port: '' }],
    ['http://a.com:80', { scheme: 'http:', wildcard: false, host: 'a.com', port: '' }],
    ['https://a.com:80', { scheme: 'https:', wildcard: false, host: 'a.com', port: '80' }],
    ['https://example.com/', { scheme: 'https:', wildcard: false, host: 'example.com', port: '' }],
    ['HTTPS://WWW.Example.COM', { scheme: 'https:', wildcard: false, host: 'www.example.com', port: '' }],
    ['https://*.example.com', { scheme: 'https:', wildcard: true, host: 'example.com', port: '' }],
    ['https://*.example.com:8443', { scheme: 'https:', wildcard: true, host: 'example.com', port: '8443' }],
    ['https://[::1]:8080', { scheme: 'https:', wildcard: false, host: '[::1]', port: '8080' }],
    ['https://127.0.0.1', { scheme: 'https:', wildcard: false, host: '127.0.0.1', port: '' }],
  ];
  for (const [pattern, expected] of valid) {
    test(`accepts ${pattern}`, () => assert.deepEqual(parseOriginPattern(pattern), expected));
  }

  const invalid: Array<[string, RegExp]> = [
    ['example.com', /must be an origin/],
    ['', /must be an origin/],
    ['https://', /must be an origin/],
    ['ftp://x.com', /scheme must be http or https/],
    ['javascript://x.com', /scheme must be http or https/],
    ['https://example.com/path', /no path/],
    ['https://example.com?', /no path, query/],
    ['https://example.com#top', /fragment/],
    ['https://user:pass@example.com', /credentials/],
    ['https://exa*mple.com', /wildcard may only stand as the first label/],
    ['https://*example.com', /wildcard may only stand as the first label/],
    ['https://a.*.example.com', /wildcard may only stand as the first label/],
    ['https://*.ex*ample.com', /wildcard may only stand as the first label/],
    ['https://*.*.example.com', /wildcard may only stand as the first label/],
    ['*://example.com', /wildcard may only stand as the first label/],
    ['https://*.com', /at least two labels/],
    ['https://*..example.com', /not a valid host name/],
    ['https://%2a.example.com', /not a valid host name/],
    ['https://example.com.', /not a valid host name/],
    ['https://exa_mple.com', /not a valid host name/],
    ['https://example.com:99999', /must be an origin/],
  ];
  for (const [pattern, reason] of invalid) {
    test(`rejects ${JSON.stringify(pattern)} with a reason`, () => {
      const result = parseOriginPattern(pattern);
      assert.ok('error' in result, `${pattern} parsed as ${JSON.stringify(result)}`);
      assert.match(result.error, reason);
    });
  }
});

describe('originMatches', () => {
  const cases: Array<[pattern: string, origin: string, matches: boolean]> = [
    ['https://www.example.com', 'https://www.example.com', true],
    ['https://www.example.com', 'https://WWW.EXAMPLE.COM', true],
    ['https://www.example.com', 'https://example.com', false],
    ['https://www.example.com', 'https://www.example.com.evil.io', false],
    ['https://www.example.com', 'http://www.example.com', false],
    ['http://www.example.com', 'https://www.example.com', false],
    ['https://www.example.com', 'https://www.example.com:8443', false],
    ['https://www.example.com:8443', 'https://www.example.com', false],
    ['https://www.example.com:8443', 'https://www.example.com:8443', true],
    ['http://localhost:3000', 'http://localhost:3000', true],
    ['http://localhost:3000', 'http://localhost:3001', false],
    ['https://a.com:443', 'https://a.com', true],
    ['https://a.com', 'https://a.com:443', true],
    ['http://a.com:80', 'http://a.com', true],
    ['https://*.example.com', 'https://a.example.com', true],
    ['https://*.example.com', 'https://a.b.example.com', true],
    ['https://*.example.com', 'https://example.com', false],
    ['https://*.example.com', 'https://evilexample.com', false],
    ['https://*.example.com', 'https://a.evilexample.com', false],
    ['https://*.example.com', 'http://a.example.com', false],
    ['https://*.example.com', 'https://a.example.com.evil.io', false],
    ['https://*.example.com', 'https://a.example.com:8443', false],
    ['https://*.example.com:8443', 'https://a.example.com:8443', true],
    ['https://*.example.com:8443', 'https://a.example.com', false],
    ['https://[::1]:8080', 'https://[::1]:8080', true],
  ];
  for (const [pattern, origin, matches] of cases) {
    test(`${pattern} ${matches ? 'matches' : 'does not match'} ${origin}`, () => {
      assert.equal(originMatches(parsed(pattern), origin), matches);
    });
  }

  // What a browser never sends as an Origin, or sends for opaque origins (`null`), must not pass
  // a check that is meant to name the sites allowed to call.
  const malformed = [
    'null',
    '',
    ' ',
    'garbage',
    'https://',
    'a.example.com',
    '//a.example.com',
    'https://*.example.com',
    'https://.example.com',
    'https://a..example.com',
    'https://%2a.example.com',
    'https://a.example.com/path',
    'https://a.example.com?',
    'https://a.example.com#x',
    'https://user@a.example.com',
    'ftp://a.example.com',
    'file:///etc/passwd',
  ];
  for (const origin of malformed) {
    test(`the malformed Origin ${JSON.stringify(origin)} matches neither an exact nor a wildcard pattern`, () => {
      assert.equal(originMatches(parsed('https://*.example.com'), origin), false);
      assert.equal(originMatches(parsed('https://a.example.com'), origin), false);
    });
  }
});
