import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inspectJson, MAX_JSON_DEPTH } from './input-guard.ts';

/** `levels` nested arrays around `leaf`. */
function nest(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let level = 0; level < levels; level += 1) value = [value];
  return value;
}

describe('inspectJson', () => {
  test('reports each problem by JSON pointer, escaping ~ and /', () => {
    const cases: Array<[unknown, Array<{ path: string; message: string }>]> = [
      [{ a: 'ok', b: ['x', 'y\u0000'] }, [{ path: '/b/1', message: 'must not contain NUL characters or unpaired surrogates' }]],
      [{ 'a/b~c': '\ud800' }, [{ path: '/a~1b~0c', message: 'must not contain NUL characters or unpaired surrogates' }]],
      [{ m: { 'k\u0000': 1 } }, [{ path: '/m/k\u0000', message: 'is a key that contains NUL characters or unpaired surrogates' }]],
      [{ n: Infinity }, [{ path: '/n', message: 'is a number out of range' }]],
      ['\u0000', [{ path: '/', message: 'must not contain NUL characters or unpaired surrogates' }]],
      [{ fine: ['\ud83d\ude00', 'e\u0301', -0, 1e308] }, []],
    ];
    for (const [value, expected] of cases) assert.deepEqual(inspectJson(value), expected, JSON.stringify(value));
  });

  test(`nesting is refused past ${MAX_JSON_DEPTH} levels, without recursion however deep`, () => {
    assert.deepEqual(inspectJson(nest(MAX_JSON_DEPTH)), []);
    const [problem] = inspectJson(nest(MAX_JSON_DEPTH + 1));
    assert.equal(problem?.message, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    assert.equal(problem?.path, `/${Array(MAX_JSON_DEPTH).fill(0).join('/')}`);
    assert.equal(inspectJson(nest(200_000)).length, 1);
  });

  test('repairs text under the named top-level properties only, keys included, and never sets a prototype', () => {
    const body: Record<string, any> = JSON.parse('{"id":"a\\u0000","data":{"records":[{"content":"x\\u0000y","k\\u0000":"\\ud800","__proto\\u0000__":{"polluted":true}}]}}');
    const problems = inspectJson(body, { repairTextIn: ['data'] });
    assert.deepEqual(problems, [{ path: '/id', message: 'must not contain NUL characters or unpaired surrogates' }]);
    const record = body.data.records[0];
    assert.equal(record.content, 'xy');
    assert.equal(record.k, '\ufffd');
    assert.deepEqual(Object.keys(record).sort(), ['__proto__', 'content', 'k']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(record), Object.prototype);
  });
});
