import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPrivateAddress, targetProblem } from './target-url.ts';

const strict = { allowHttp: false, allowPrivateTargets: false };

test('private, loopback, link-local, metadata and reserved addresses are recognized; public ones are not', () => {
  const cases: Array<[string, boolean]> = [
    ['127.0.0.1', true], ['127.255.0.9', true], ['10.1.2.3', true], ['172.16.0.1', true], ['172.31.255.255', true],
    ['192.168.1.1', true], ['169.254.169.254', true], ['100.100.100.200', true], ['0.0.0.0', true], ['224.0.0.1', true],
    ['255.255.255.255', true], ['::1', true], ['::', true], ['fe80::1', true], ['fd00:ec2::254', true],
    ['::ffff:127.0.0.1', true], ['::ffff:7f00:1', true],
    ['8.8.8.8', false], ['172.32.0.1', false], ['93.184.216.34', false], ['2606:4700::1111', false], ['example.com', false],
  ];
  for (const [address, expected] of cases) assert.equal(isPrivateAddress(address), expected, address);
});

test('targetProblem: https only, no credentials, no literal private address unless allowed', () => {
  const cases: Array<[string, typeof strict, RegExp | undefined]> = [
    ['https://hooks.example.com/lore?x=1', strict, undefined],
    ['https://localhost/', strict, undefined],
    ['http://hooks.example.com/', strict, /WEBHOOKS_ALLOW_HTTP/],
    ['http://hooks.example.com/', { ...strict, allowHttp: true }, undefined],
    ['ftp://hooks.example.com/', strict, /https/],
    ['hooks.example.com/lore', strict, /absolute URL/],
    ['https://user:secret@hooks.example.com/', strict, /credentials/],
    ['https://127.0.0.1/', strict, /loopback, private.*127\.0\.0\.1/],
    ['https://2130706433/', strict, /127\.0\.0\.1/],
    ['https://0x7f.1/', strict, /127\.0\.0\.1/],
    ['https://[::1]:8443/', strict, /::1/],
    ['https://[::ffff:169.254.169.254]/', strict, /WEBHOOKS_ALLOW_PRIVATE_TARGETS/],
    ['https://169.254.169.254/latest/meta-data', strict, /169\.254\.169\.254/],
    ['https://10.0.0.5/', { ...strict, allowPrivateTargets: true }, undefined],
  ];
  for (const [url, rules, expected] of cases) {
    const problem = targetProblem(url, rules);
    if (expected) assert.match(problem ?? '', expected, url);
    else assert.equal(problem, undefined, url);
  }
});
