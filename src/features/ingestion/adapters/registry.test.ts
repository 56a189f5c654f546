import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { contentHubAdapter } from './content-hub.ts';
import { filesAdapter } from './files/files-adapter.ts';
import { genericJsonAdapter } from './generic-json.ts';
import { adapters, findAdapter } from './registry.ts';

describe('adapter registry', () => {
  test('lists the spec adapters, then files, with their formats', () => {
    assert.deepEqual(
      adapters.map(({ name, format, version }) => ({ name, format, version })),
      [
        { name: 'generic-json', format: 'json', version: '1.0.0' },
        { name: 'content-hub', format: 'content-hub-json', version: '1.0.0' },
        { name: 'files', format: 'multipart', version: '1.0.0' },
      ],
    );
  });

  const lookups: Array<[string, unknown]> = [
    ['generic-json', genericJsonAdapter],
    ['content-hub', contentHubAdapter],
    ['files', filesAdapter],
    ['Generic-JSON', undefined],
    ['csv', undefined],
    ['', undefined],
    ['toString', undefined],
  ];
  for (const [name, adapter] of lookups) {
    test(`findAdapter(${JSON.stringify(name)})`, () => assert.equal(findAdapter(name), adapter));
  }

  test('every adapter rejects a payload of the other format and accepts an empty one of its own', () => {
    assert.deepEqual(genericJsonAdapter.validate([[], {}]), [{ path: '', message: 'must be an object' }]);
    assert.deepEqual(contentHubAdapter.validate({ records: [] }), [{ path: '', message: 'must be an array' }]);
    assert.deepEqual(genericJsonAdapter.validate({ records: [] }), []);
    assert.deepEqual(contentHubAdapter.validate([[], {}]), []);
    assert.equal(genericJsonAdapter.count({ records: [] }), 0);
    assert.equal(contentHubAdapter.count([[], {}]), 0);
  });
});
