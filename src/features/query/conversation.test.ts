import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isFollowUp, standaloneQuestion } from './conversation.ts';

describe('follow-up questions', () => {
  test('messages that lean on the conversation, and messages that stand alone', () => {
    const cases: [string, boolean][] = [
      ['and how much does it cost?', true],
      ['What about the Pro plan?', true],
      ['Also for teams?', true],
      ['How do I change it?', true],
      ['Is that free?', true],
      ['why?', true],
      ['pricing', true],
      ['How much does the Pro plan cost per month?', false],
      ['Which memory allocator does Redis use on Linux?', false],
      ['How do I reset my password?', false],
    ];
    for (const [message, expected] of cases) assert.equal(isFollowUp(message), expected, message);
  });

  test('a follow-up is searched with the previous question; a new topic as asked; the first question as asked', () => {
    const history = [
      { role: 'user' as const, content: 'What is the Pro plan?' },
      { role: 'assistant' as const, content: 'The Pro plan adds SSO. [1]' },
    ];
    assert.equal(standaloneQuestion('and how much does it cost?', history), 'What is the Pro plan? and how much does it cost?');
    assert.equal(standaloneQuestion('How do I reset my password?', history), 'How do I reset my password?');
    assert.equal(standaloneQuestion('and how much does it cost?', []), 'and how much does it cost?');
  });
});
