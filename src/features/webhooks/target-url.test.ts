import assert from 'node:assert/strict';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { screenedLookup, sendWebhook, targetAgents } from './send-webhook.ts';
import { isPrivateAddress, targetProblem } from './target-url.ts';

const strict = { allowHttp: false, allowPrivateTargets: false };

test('private, loopback, link-local, metadata and reserved addresses are recognized; public ones are not', () => {
  const cases: Array<[string, boolean]> = [
    ['127.0.0.1', true], ['127.255.0.9', true], ['10.1.2.3', true], ['172.16.0.1', true], ['172.31.255.255', true],
    ['192.168.1.1', true], ['169.254.169.254', true], ['100.100.100.200', true], ['0.0.0.0', true], ['224.0.0.1', true],
    ['255.255.255.255', true], ['::1', true], ['::', true], ['fe80::1', true], ['fd00:ec2::254', true],
    ['::ffff:127.0.0.1', true], ['::ffff:7f00:1', true],
    ['8.8.8.8', false], ['172.32.0.1', false], ['93.184.216.34', false], ['2606:4700::1111', false], ['example.com', false],
    ...embeddedCases.map(([address, carried]): [string, boolean] => [address, isPrivateAddress(carried)]),
  ];
  for (const [address, expected] of cases) assert.equal(isPrivateAddress(address), expected, address);
});

/**
 * IPv6 addresses that carry an IPv4 address, and the one they carry: IPv4-mapped, IPv4-translated,
 * IPv4-compatible, NAT64 (well-known and local-use prefixes), 6to4 and Teredo (whose client
 * address is stored inverted; its server's address is the other one it carries).
 */
const embeddedCases: Array<[string, string]> = [
  ['::ffff:7f00:1', '127.0.0.1'], ['::ffff:808:808', '8.8.8.8'],
  ['::ffff:0:7f00:1', '127.0.0.1'], ['::ffff:0:808:808', '8.8.8.8'],
  ['::7f00:1', '127.0.0.1'], ['::a9fe:a9fe', '169.254.169.254'], ['::808:808', '8.8.8.8'],
  ['64:ff9b::7f00:1', '127.0.0.1'], ['64:ff9b::a00:1', '10.0.0.1'], ['64:ff9b::808:808', '8.8.8.8'],
  ['64:ff9b:1::7f00:1', '127.0.0.1'], ['64:ff9b:1::808:808', '8.8.8.8'],
  ['2002:7f00:1::', '127.0.0.1'], ['2002:c0a8:101::1', '192.168.1.1'], ['2002:808:808::1', '8.8.8.8'],
  ['2001:0:808:808::80ff:fffe', '127.0.0.1'], ['2001:0:7f00:1::f7f7:f7f7', '127.0.0.1'], ['2001:0:808:808::f7f7:f7f7', '8.8.8.8'],
];

const lookup = promisify(screenedLookup);

test('creation and delivery agree: a target refused as a literal URL is refused as a DNS answer, and only those', async () => {
  const addresses = [...embeddedCases.map(([address]) => address), '127.0.0.1', '10.1.2.3', '::1', 'fd00:ec2::254', '8.8.8.8', '2606:4700::1111'];
  for (const address of addresses) {
    const problem = targetProblem(`https://${address.includes(':') ? `[${address}]` : address}/`, strict);
    // dns.lookup answers a literal address with itself: the answer the delivery's connection screens.
    const answered = await lookup(address, { all: true }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    if (problem) assert.equal(answered, `${address} resolves to a loopback, private, link-local or metadata address (${/\((.+)\);/.exec(problem)![1]})`);
    else assert.equal(answered, undefined, address);
    assert.equal(Boolean(problem), isPrivateAddress(address), address);
  }
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

test('a target stored with a literal address that is now refused is not connected to', async () => {
  // Stored before addresses carrying an IPv4 one were refused, or while WEBHOOKS_ALLOW_PRIVATE_TARGETS was on.
  const outcome = await sendWebhook(
    { url: 'https://[::7f00:1]:9/hook', body: '{}', headers: {} },
    { agents: targetAgents(false), timeoutMs: 5_000, signal: new AbortController().signal },
  );
  assert.equal(outcome.statusCode, null);
  assert.equal(
    outcome.error,
    'Refused to connect: the target\'s address is a loopback, private, link-local or metadata address (::7f00:1, which carries 127.0.0.1); WEBHOOKS_ALLOW_PRIVATE_TARGETS is off',
  );
});
