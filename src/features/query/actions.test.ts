import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Action } from '../experiences/action.schema.ts';
import { asksForHandover, buildActions } from './actions.ts';

const handover: Action = { id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' } };
const survey: Action = { id: 'survey', label: 'Rate us', action: { type: 'send_event', event: 'survey' } };
const onlyUnanswered: Action = { id: 'docs', label: 'Browse the docs', action: { type: 'open_url', url: 'https://docs.example.com' }, visibility: { when: 'unanswered' } };
const source = (number: number, title: string, url: string | null) => ({ number, entryId: `e${number}`, title, url, snippet: '', score: 1 });

describe('actions', () => {
  test('requests for a person are recognised; ordinary questions are not', () => {
    for (const text of ['I want to talk to a human', 'Can I speak with an agent?', 'contact support please', 'Let me chat with someone from customer service']) {
      assert.ok(asksForHandover(text), text);
    }
    for (const text of ['How do I reset my password?', 'What is the refund policy?', 'Which humane pricing do you offer?']) {
      assert.ok(!asksForHandover(text), text);
    }
  });

  test('an answered question: templates shown always, links to cited sources with web URLs, follow-ups from related titles, labelled with the question they ask', () => {
    const actions = buildActions({
      templates: [handover, survey, onlyUnanswered],
      cited: [source(1, 'Refund policy', 'https://help.example.com/refunds'), source(2, 'Internal note', null), source(3, 'Script', 'javascript:alert(1)')],
      related: [{ title: 'Refund policy' }, { title: 'How do I cancel? (Billing)' }, { title: 'Invoices' }, { title: '' }, { title: 'Taxes' }, { title: 'Receipts' }],
      answered: true,
      handoverRequested: false,
    });
    assert.deepEqual(actions, [
      survey,
      { id: 'lore-source-1', label: 'Open Refund policy', action: { type: 'open_url', url: 'https://help.example.com/refunds' } },
      { id: 'lore-follow-up-1', label: 'How do I cancel?', action: { type: 'send_query', query: 'How do I cancel?' } },
      { id: 'lore-follow-up-2', label: 'What should I know about Invoices?', action: { type: 'send_query', query: 'What should I know about Invoices?' } },
      { id: 'lore-follow-up-3', label: 'What should I know about Taxes?', action: { type: 'send_query', query: 'What should I know about Taxes?' } },
    ]);
  });

  test('an unanswered question: the handover and the unanswered-only templates, no follow-ups', () => {
    const actions = buildActions({ templates: [handover, survey, onlyUnanswered], cited: [], related: [{ title: 'Invoices' }], answered: false, handoverRequested: false });
    assert.deepEqual(actions.map((action) => action.id), ['human', 'survey', 'docs']);
  });

  test('a request for a person beside an answer brings the handover', () => {
    const actions = buildActions({ templates: [handover], cited: [], related: [], answered: true, handoverRequested: true });
    assert.deepEqual(actions, [handover]);
  });
});
