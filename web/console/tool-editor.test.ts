import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromToolDraft, toolDraftProblems, toToolDraft } from './tool-editor.tsx';
import { sampleArguments } from './tool-test.tsx';
import type { Tool } from './types.ts';

const orderStatus: Tool = {
  name: 'order_status',
  description: 'Look up an order.',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  http: { method: 'GET', url: 'https://api.example.com/orders/{orderId}', headers: { 'X-Api-Key': '***', Accept: 'application/json' }, timeoutMs: 1000 },
  examples: ['Where is my order 12345?', 'Has my order shipped?'],
  answerTemplate: 'Your order {orderId} is {status}.',
};

test('tool drafts: a read tool goes back unchanged, masked header values as "***" (the service keeps them)', () => {
  const bare: Tool = { name: 'ping', description: 'Ping.', parameters: { type: 'object' }, http: { method: 'POST', url: 'https://api.example.com/ping' }, examples: ['ping?'] };
  for (const tool of [orderStatus, bare]) assert.deepEqual(fromToolDraft(toToolDraft(tool)), tool, tool.name);
  const draft = toToolDraft(orderStatus);
  assert.deepEqual(draft.headers, [
    { name: 'X-Api-Key', value: '', stored: true },
    { name: 'Accept', value: 'application/json', stored: false },
  ]);
});

test('tool drafts: a typed header value replaces the stored one; blank rows are dropped; fields are trimmed', () => {
  const draft = toToolDraft(orderStatus);
  const edited = {
    ...draft,
    name: ' order_status ',
    headers: [{ ...draft.headers[0]!, value: 'new-key' }, { name: '', value: '', stored: false }],
    timeoutMs: '',
    examples: 'Where is my order?\n\n  Has it shipped?  ',
    answerTemplate: '  ',
  };
  const { answerTemplate: _template, ...withoutTemplate } = orderStatus;
  assert.deepEqual(fromToolDraft(edited), {
    ...withoutTemplate,
    http: { method: 'GET', url: orderStatus.http.url, headers: { 'X-Api-Key': 'new-key' } },
    examples: ['Where is my order?', 'Has it shipped?'],
  });
});

test('tool drafts: parameters must be a JSON object, with the path of the API', () => {
  const cases: [string, string[]][] = [
    ['{"type": "object"}', []],
    ['{"type": "object",', ['is not valid JSON']],
    ['["orderId"]', ['must be a JSON object']],
    ['null', ['must be a JSON object']],
    ['', ['is not valid JSON']],
  ];
  for (const [parameters, messages] of cases) {
    const problems = toolDraftProblems({ ...toToolDraft(orderStatus), parameters }, 2);
    assert.deepEqual(problems.map((problem) => problem.path), messages.map(() => '/tools/2/parameters'), parameters);
    messages.forEach((message, index) => assert.ok(problems[index]!.message.startsWith(message), `${parameters}: ${problems[index]!.message}`));
  }
});

test('sample arguments: one key per required parameter, a placeholder of its type; {} with none required', () => {
  const cases: [Record<string, unknown>, unknown][] = [
    [{ type: 'object' }, {}],
    [{ type: 'object', properties: { orderId: { type: 'string' } } }, {}],
    [orderStatus.parameters, { orderId: '' }],
    [
      { type: 'object', properties: { count: { type: 'integer' }, rush: { type: 'boolean' }, tags: { type: 'array' }, note: {} }, required: ['count', 'rush', 'tags', 'note', 7] },
      { count: 0, rush: false, tags: [], note: '' },
    ],
  ];
  for (const [parameters, expected] of cases) assert.deepEqual(JSON.parse(sampleArguments(parameters)), expected, JSON.stringify(parameters));
});
