/** Which answer images the widget shows: https images of an experience's listed hosts, no SVG. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { imageAllowed } from './image-hosts.ts';

const hosts = ['images.shop.example', '*.cdn.example'];

describe('imageAllowed', () => {
  const cases: [string | undefined, boolean, string][] = [
    ['https://images.shop.example/label.png', true, 'a listed host'],
    ['https://IMAGES.shop.example/label.png', true, 'host names are case-insensitive'],
    ['https://eu.cdn.example/a.jpg', true, 'a subdomain of a *. pattern'],
    ['https://a.b.cdn.example/a.jpg?size=2', true, 'a deeper subdomain'],
    ['https://cdn.example/a.jpg', false, 'the domain of a *. pattern itself'],
    ['https://evilcdn.example/a.jpg', false, 'a host that only ends with the same letters'],
    ['https://images.shop.example.evil.example/a.png', false, 'a listed host as a prefix'],
    ['https://shop.example/a.png', false, 'the parent of a listed host'],
    ['http://images.shop.example/label.png', false, 'plain http'],
    ['https://images.shop.example:8443/label.png', false, 'another port'],
    ['https://images.shop.example/logo.svg', false, 'an SVG file'],
    ['https://images.shop.example/logo.SVG?x=1', false, 'an SVG file in capitals'],
    ['data:image/png;base64,AAAA', false, 'a data: URL'],
    ['/relative.png', false, 'a relative URL'],
    [undefined, false, 'no URL'],
  ];
  for (const [url, allowed, name] of cases) test(`${name}: ${url}`, () => assert.equal(imageAllowed(url, hosts), allowed));

  test('no listed host: no image', () => assert.equal(imageAllowed('https://images.shop.example/label.png', []), false));
});
