import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ToolCallAccumulator, toolDefinitions, type ToolCall } from './tool-calls.ts';

const call = (id: string, name: string, args: string): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });

describe('ToolCallAccumulator', () => {
  const cases: { name: string; replies: unknown[]; expected: ToolCall[] }[] = [
    {
      name: 'joins the arguments of streamed fragments by index, in index order',
      replies: [
        [{ index: 1, id: 'call_b', type: 'function', function: { name: 'order_status', arguments: '' } }],
        [{ index: 0, id: 'call_a', type: 'function', function: { name: 'order_status', arguments: '{"orderId":' } }],
        [{ index: 1, function: { arguments: '{"orderId":"2"}' } }],
        [{ index: 0, function: { arguments: '"1"}' } }],
      ],
      expected: [call('call_a', 'order_status', '{"orderId":"1"}'), call('call_b', 'order_status', '{"orderId":"2"}')],
    },
    {
      name: 'takes the complete calls of a JSON reply, which have no index',
      replies: [[{ id: 'call_x', type: 'function', function: { name: 'a', arguments: '{}' } }, { id: 'call_y', type: 'function', function: { name: 'b', arguments: '{"n":1}' } }]],
      expected: [call('call_x', 'a', '{}'), call('call_y', 'b', '{"n":1}')],
    },
    {
      name: 'names a call without id by its round and index; keeps a repeated name once; stringifies object arguments',
      replies: [[{ index: 0, function: { name: 'order_status', arguments: { orderId: '12345' } } }], [{ index: 0, function: { name: 'order_status' } }]],
      expected: [call('call_2_0', 'order_status', '{"orderId":"12345"}')],
    },
    {
      name: 'ignores what is not a list of fragments',
      replies: [undefined, null, 'tool_calls', { index: 0 }, [null, 7]],
      expected: [],
    },
  ];
  for (const { name, replies, expected } of cases) {
    test(name, () => {
      const calls = new ToolCallAccumulator(2);
      for (const reply of replies) calls.add(reply);
      assert.deepEqual(calls.list(), expected);
      assert.equal(calls.size, expected.length);
    });
  }
});

test('toolDefinitions wraps each function as the protocol does, and only its three fields', () => {
  const functions = [{ name: 'order_status', description: 'Look up an order.', parameters: { type: 'object' }, extra: true }];
  assert.deepEqual(toolDefinitions(functions), [{ type: 'function', function: { name: 'order_status', description: 'Look up an order.', parameters: { type: 'object' } } }]);
});
