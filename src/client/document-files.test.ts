import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { packDocuments, type DocumentFile } from './document-files.ts';

const MB = 1024 * 1024;
const documents = (sizes: number[]): DocumentFile[] => sizes.map((size, index) => ({ path: `/d/${index}`, name: `${index}`, size }));
const names = (jobs: DocumentFile[][]) => jobs.map((job) => job.map((document) => document.name).join(','));

describe('packDocuments', () => {
  test('fills a job up to the limit less the framing, in order', () => {
    assert.deepEqual(names(packDocuments(documents([10 * MB, 10 * MB, 9 * MB, 1 * MB]))), ['0,1,2', '3']);
  });
  test('a document over the limit is a job of its own', () => {
    assert.deepEqual(names(packDocuments(documents([1 * MB, 40 * MB, 1 * MB]))), ['0', '1', '2']);
  });
  test('at most the file limit per job', () => {
    assert.deepEqual(names(packDocuments(documents([1, 1, 1, 1, 1]), { bytes: 30 * MB, files: 2 })), ['0,1', '2,3', '4']);
  });
});
