import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractArguments } from './extract-arguments.ts';
import { toolAnswer } from './tool-answer.ts';
import { argumentProblems, parameterSchema } from './tool-parameters.ts';
import type { Tool } from './tool.schema.ts';

const parameters = {
  type: 'object',
  properties: {
    orderId: { type: 'string', pattern: '^[0-9]{4,10}$' },
    carrier: { type: 'string', enum: ['DHL', 'UPS'] },
    quantity: { type: 'integer', minimum: 1, maximum: 99 },
    email: { type: 'string', format: 'email' },
    note: { type: 'string' },
  },
  required: ['orderId'],
};
const accepts = (name: string, value: unknown) => argumentProblems(parameterSchema(parameters, name), value).length === 0;

describe('arguments found in a question', () => {
  test('a pattern, an enum, a number in range, a format and a quoted string', () => {
    const args = extractArguments(parameters, ['Send 3 of order 123456 by ups to ann@example.com, "leave at the door"'], accepts);
    assert.deepEqual(args, { orderId: '123456', carrier: 'UPS', quantity: 3, email: 'ann@example.com', note: 'leave at the door' });
  });

  test('an anchored pattern matches inside the question; a span fills one parameter only; values out of range are skipped', () => {
    const args = extractArguments(parameters, ['order 120 or 4567, 150 items'], accepts);
    // 120 is too short for orderId; 150 is above quantity's maximum, 120 is too; 4567 is orderId's.
    assert.deepEqual(args, { orderId: '4567' });
  });

  test('the latest message is searched first, then the question with its conversation', () => {
    const args = extractArguments(parameters, ['and by DHL?', 'Where is order 98765? and by DHL?'], accepts);
    assert.deepEqual(args, { carrier: 'DHL', orderId: '98765' });
  });

  test('an enum value inside another word does not count', () => {
    assert.deepEqual(extractArguments(parameters, ['groups of order 5555'], accepts), { orderId: '5555' });
  });
});

describe('the offline answer of a call', () => {
  const tool = { name: 'order_status', answerTemplate: 'Order {orderId} is {status}.' } as Tool;

  test('the template is filled from the arguments and the response, with the response\'s Markdown escaped', () => {
    assert.equal(toolAnswer(tool, { orderId: '1' }, { text: null, json: { status: '*shipped* [x](y)' } }), 'Order 1 is \\*shipped\\* \\[x\\](y).');
  });

  test('a placeholder neither has gives no answer, rather than one with a hole', () => {
    assert.equal(toolAnswer(tool, { orderId: '1' }, { text: null, json: { state: 'shipped' } }), undefined);
  });

  test('without a template, the top-level scalar fields are listed', () => {
    const plain = { name: 'order_status' } as Tool;
    assert.equal(toolAnswer(plain, {}, { text: null, json: { status: 'shipped', eta: null, items: [1] } }), '- **status**: shipped\n- **eta**: null');
  });
});
