import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { questionTitle } from './qa-pairs.ts';

describe('questionTitle', () => {
  const cases: [string, string | undefined][] = [
    ['Q: When am I charged?', 'When am I charged?'],
    ['q: lower case works', 'lower case works'],
    ['Q1. Numbered question?', 'Numbered question?'],
    ['Q 2) With a space', 'With a space'],
    ['Question: Can I cancel?', 'Can I cancel?'],
    ['Question 3: Numbered?', 'Numbered?'],
    ['**Q:** Bold label', 'Bold label'],
    ['**Question:** Bold long label', 'Bold long label'],
    ['**Question**: Colon outside', 'Colon outside'],
    ['__Q__ Underscores', 'Underscores'],
    ['**Q: All bold?**', 'All bold?'],
    ['**Question**', ''],
    ['  Q:   padded  ', 'padded'],
    ['**How do I reset my password?**', 'How do I reset my password?'],
    ['__Is there an API?__', 'Is there an API?'],
    ['A: An answer', undefined],
    ['Quick: not a label', undefined],
    ['Questions: not a label', undefined],
    ['Q.E.D.', undefined],
    ['**Note**', undefined],
    ['**Bold** then a question?', undefined],
    ['What is lore?', undefined],
    ['', undefined],
  ];
  for (const [line, expected] of cases) {
    test(`${JSON.stringify(line)} → ${JSON.stringify(expected)}`, () => assert.equal(questionTitle(line), expected));
  }
});
