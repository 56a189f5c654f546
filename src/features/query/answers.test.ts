/**
 * Answers from a real knowledge base with the offline defaults (builtin embeddings, extractive
 * generator): sections of the Redis and postgresql-common READMEs shipped by Debian, in
 * samples/debian-docs.json, the sample the README's walk-through ingests.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit, waitForJob, type GenericRecord } from '../../../test/ingestion.ts';

const sample: { records: GenericRecord[] } = JSON.parse(readFileSync(new URL('../../../samples/debian-docs.json', import.meta.url), 'utf8'));
const FALLBACK = 'I could not find that in the Redis and PostgreSQL notes.';

describe(`answers from the sample knowledge base, offline defaults (${engine})`, () => {
  let server: TestServer;
  let experienceId: string;
  const ask = async (text: string, sessionId?: string) => {
    const answer = await server.request('POST', '/api/v2/query', { body: { text, experienceId, ...(sessionId ? { sessionId } : {}) } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body;
  };
  /** The record id of the source a citation [n] of the answer points at. */
  const citedTitles = (body: any) =>
    [...new Set([...body.answer.matchAll(/\[(\d+)\]/g)].map((match: RegExpMatchArray) => body.sources.find((s: any) => s.number === Number(match[1]))?.title))];

  before(async () => {
    server = await startTestServer();
    const { token } = await server.tenant(['*']);
    const knowledgeBaseId = await createKnowledgeBase(server, token);
    // The builtin encoder embeds about 100 chunks here: seconds on an idle machine, minutes when
    // both engines' test files share two cores, hence the generous limit.
    const job = await waitForJob(server, token, await submit(server, token, knowledgeBaseId, sample.records), undefined, 300_000);
    assert.equal(job.status, 'completed');
    const created = await server.request('POST', '/api/v2/experiences', {
      token,
      body: {
        name: 'docs',
        knowledgeBaseIds: [knowledgeBaseId],
        fallbackMessage: FALLBACK,
        actions: [{ id: 'human', label: 'Ask the team', action: { type: 'trigger_handover', agentType: 'engineer' } }],
      },
    });
    assert.equal(created.status, 201, created.text);
    experienceId = created.body.id;
  });
  after(async () => server?.close());

  test('each question is answered from, and cites, the section that holds the answer', async () => {
    // Each question with the sections that hold its answer (either may be cited) and what the answer must say.
    const cases: [string, string[], RegExp][] = [
      ['Which memory allocator does Redis use by default on Linux?', ['Allocator (Redis)'], /jemalloc/],
      ['How do I build a 32 bit Redis binary?', ['Building Redis (Redis)'], /make 32bit/],
      [
        'How do I upgrade a PostgreSQL cluster to a newer major version on Debian?',
        ['pg_upgradecluster (PostgreSQL on Debian)', 'Common programs (PostgreSQL on Debian)'],
        /pg_upgradecluster/,
      ],
      ['How do I run the Redis test suite after building?', ['Building Redis (Redis)'], /make test/],
    ];
    for (const [question, titles, expected] of cases) {
      const body = await ask(question);
      const cited = titles.filter((title) => citedTitles(body).includes(title));
      assert.ok(cited.length > 0, `${question}\n${body.answer}\n${JSON.stringify(body.sources.map((s: any) => s.title))}`);
      assert.match(body.answer, expected, question);
      const source = body.sources.find((s: any) => s.title === cited[0]);
      assert.match(source.url, /^https:\/\//);
      assert.ok(body.actions.some((action: any) => action.action.type === 'open_url'), JSON.stringify(body.actions));
      assert.ok(!body.actions.some((action: any) => action.id === 'human'));
    }
  });

  test('a question outside the knowledge base: the fallback message and the handover, no sources', async () => {
    const body = await ask('What is the best recipe for a chocolate cake?');
    assert.equal(body.answer, FALLBACK);
    assert.deepEqual(body.sources, []);
    assert.deepEqual(body.actions.map((action: any) => action.id), ['human']);
  });

  test('a follow-up is answered with the conversation in mind', async () => {
    const first = await ask('Which memory allocator does Redis use by default on Linux?');
    const followUp = await ask('And how can I select a different one?', first.sessionId);
    assert.equal(followUp.sessionId, first.sessionId);
    assert.ok(citedTitles(followUp).includes('Allocator (Redis)'), followUp.answer);
    assert.match(followUp.answer, /MALLOC/);
  });
});
