/**
 * Answer quality on real documentation, through the real paths: starts lore on a database of its
 * own (PGlite, or a fresh database on the PostgreSQL server DATABASE_URL names), ingests the
 * Python 3.11 documentation that Debian ships (bench/answers/python-docs.ts; `apt-get install
 * python3.11-doc`) as content-hub jobs into a knowledge base behind a public experience, asks the
 * questions of a split (bench/answers/questions.ts) through POST /api/v2/query, and prints one
 * JSON line:
 *
 * - `accuracy`: answers to factual and paraphrased questions that state every expected fact;
 * - `sourceHit`: the same questions whose answer cites an expected page;
 * - `chunkHit10`: the same questions for which a chunk of an expected page holding every fact is
 *   among the top 10 chunks retrieved (hybrid) for the question;
 * - `offTopic`: off-topic questions answered with the fallback message and no source;
 * - `followUps`: second turns of two-turn conversations that state their facts;
 * - `latencyMs` p50/p95 of the queries, and every figure per kind;
 * - `retrieval`: page hit@1/5/10 and MRR@10 of the factual and paraphrased questions for the
 *   keyword, vector and hybrid modes of POST /api/v2/knowledge-bases/{id}/retrieve.
 *
 *   npm run bench:answers [-- --split dev|test|all] [--data-dir DIR] [--docs DIR] [--report FILE]
 *
 * `--data-dir DIR` (PGlite only) keeps the ingested database in DIR and reuses it on the next run,
 * so that query-time changes are measured without ingesting again (delete DIR after a change to
 * ingestion). `--report FILE` writes every question with its answer, sources and verdict.
 * Tune on `dev`; `test` is for reporting.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ask as askQuery, ingestSummary, inFlight, runAnswerBench, share, type AnswerRun, type KeptState, type Measured } from './answer-bench.ts';
import { contentHubExport, DEFAULT_DOCS_DIR, readDocPages, type DocPage } from './answers/python-docs.ts';
import { readQuestions, type Question, type Split, type Turn } from './answers/questions.ts';
import { hitsPage, pageOfUrl, reciprocalRank, statesFacts } from './answers/score.ts';
import { round } from './corpus.ts';
import { call } from './lore-server.ts';

const { values: options } = parseArgs({
  options: {
    split: { type: 'string', default: 'dev' },
    'data-dir': { type: 'string' },
    docs: { type: 'string', default: DEFAULT_DOCS_DIR },
    report: { type: 'string' },
    // Queries in flight at once: the figures are quality, not load.
    concurrency: { type: 'string', default: '3' },
  },
});
const split = options.split as Split;
if (!['dev', 'test', 'all'].includes(split)) throw new Error('--split is dev, test or all.');
if (!existsSync(options.docs)) throw new Error(`${options.docs} does not exist: apt-get install python3.11-doc (or pass --docs).`);

// A job's JSON body stays well under the 30 MB limit: pages are submitted in jobs of about 8 MB.
const JOB_BYTES = 8 * 1024 * 1024;
const RETRIEVAL_DEPTH = 50;
const MODES = ['keyword', 'vector', 'hybrid'] as const;

/** What a kept database holds, so that a later run can reuse it. */
type Kept = KeptState & { pages: number };

/** Pages in jobs of at most JOB_BYTES of JSON each. */
function jobsOf(pages: DocPage[]): DocPage[][] {
  const jobs: DocPage[][] = [[]];
  let bytes = 0;
  for (const page of pages) {
    const size = page.html.length * 1.3;
    if (bytes + size > JOB_BYTES && jobs.at(-1)!.length > 0) {
      jobs.push([]);
      bytes = 0;
    }
    jobs.at(-1)!.push(page);
    bytes += size;
  }
  return jobs;
}

async function waitForJobs(base: string, token: string, jobIds: string[]): Promise<any[]> {
  const finished = new Map<string, any>();
  while (finished.size < jobIds.length) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const id of jobIds.filter((jobId) => !finished.has(jobId))) {
      const job = await call(base, 'GET', `/api/v2/data-ingestion/jobs/${id}`, token);
      if (['completed', 'failed', 'cancelled'].includes(job.status)) finished.set(id, job);
    }
  }
  return [...finished.values()];
}

/** Ingests the documentation into a new knowledge base behind a new public experience. */
async function ingestDocs(base: string, token: string, workspaceId: string, embedder: string): Promise<Kept> {
  const pages = await readDocPages(options.docs);
  const knowledgeBase = await call(base, 'POST', '/api/v2/knowledge-bases', token, { name: 'python-docs' });
  const experience = await call(base, 'POST', '/api/v2/experiences', token, { name: 'python-docs', knowledgeBaseIds: [knowledgeBase.id] });
  const started = performance.now();
  const jobIds: string[] = [];
  for (const job of jobsOf(pages)) {
    const submitted = await call(base, 'POST', '/api/v2/data-ingestion/jobs', token, {
      adapterType: 'content-hub',
      knowledgeBaseId: knowledgeBase.id,
      data: contentHubExport(job),
    });
    jobIds.push(submitted.jobId);
  }
  const jobs = await waitForJobs(base, token, jobIds);
  return {
    pages: pages.length,
    embedder,
    workspaceId,
    knowledgeBaseId: knowledgeBase.id,
    experienceId: experience.id,
    ingest: ingestSummary(jobs, (performance.now() - started) / 1000),
  };
}

type Asked = { answer: string; pages: (string | undefined)[]; sessionId: string; ms: number };

async function ask(base: string, experienceId: string, text: string, sessionId?: string): Promise<Asked> {
  const asked = await askQuery(base, experienceId, text, sessionId);
  return { answer: asked.answer, pages: asked.sources.map((source) => pageOfUrl(source.url)), sessionId: asked.sessionId, ms: asked.ms };
}

/** Distinct pages of the chunks retrieved for a question, best first, with the chunks themselves. */
async function retrieve(base: string, token: string, knowledgeBaseId: string, query: string, mode: string, topK: number) {
  const answer = await call(base, 'POST', `/api/v2/knowledge-bases/${knowledgeBaseId}/retrieve`, token, { query, mode, topK });
  const results = answer.results as { recordId: string; text: string }[];
  return { pages: [...new Set(results.map((result) => result.recordId))], chunks: results };
}

type Verdict = {
  id: string;
  kind: Question['kind'];
  question: string;
  answer: string;
  sources: (string | undefined)[];
  correct: boolean;
  sourceHit: boolean;
  chunkHit?: boolean;
  retrieval?: Record<string, number>;
  followUp?: { question: string; answer: string; sources: (string | undefined)[]; correct: boolean };
};

async function judge(base: string, token: string, state: Kept, question: Question, fallback: string, latencies: number[]): Promise<Verdict> {
  const first = await ask(base, state.experienceId, question.question);
  latencies.push(first.ms);
  const verdict: Verdict = {
    id: question.id,
    kind: question.kind,
    question: question.question,
    answer: first.answer,
    sources: first.pages,
    correct: question.kind === 'off-topic' ? first.answer.trim() === fallback.trim() && first.pages.length === 0 : statesFacts(first.answer, question.facts),
    sourceHit: hitsPage(question, first.pages),
  };
  if (question.kind === 'factual' || question.kind === 'paraphrased') {
    const top = await retrieve(base, token, state.knowledgeBaseId, question.question, 'hybrid', 10);
    verdict.chunkHit = top.chunks.some((chunk) => question.pages.includes(chunk.recordId) && statesFacts(chunk.text, question.facts));
    verdict.retrieval = {};
    for (const mode of MODES) {
      const { pages } = await retrieve(base, token, state.knowledgeBaseId, question.question, mode, RETRIEVAL_DEPTH);
      verdict.retrieval[`${mode}Rank`] = pages.findIndex((page) => question.pages.includes(page)) + 1;
      verdict.retrieval[`${mode}RR`] = reciprocalRank(question, pages, 10);
    }
  }
  if (question.followUp) {
    const second: Turn = question.followUp;
    const next = await ask(base, state.experienceId, second.question, first.sessionId);
    latencies.push(next.ms);
    verdict.followUp = { question: second.question, answer: next.answer, sources: next.pages, correct: statesFacts(next.answer, second.facts) };
  }
  return verdict;
}

function summarize(verdicts: Verdict[]) {
  const answerable = verdicts.filter((verdict) => verdict.kind === 'factual' || verdict.kind === 'paraphrased');
  const perKind = (kind: Question['kind']) => verdicts.filter((verdict) => verdict.kind === kind);
  const retrieval = Object.fromEntries(
    MODES.map((mode) => {
      const ranks = answerable.map((verdict) => verdict.retrieval![`${mode}Rank`]!);
      const within = (depth: number) => share(ranks.map((rank) => rank > 0 && rank <= depth));
      const mrr = answerable.reduce((sum, verdict) => sum + verdict.retrieval![`${mode}RR`]!, 0) / Math.max(answerable.length, 1);
      return [mode, { hit1: within(1), hit5: within(5), hit10: within(10), mrr10: round(mrr, 3) }];
    }),
  );
  return {
    accuracy: share(answerable.map((verdict) => verdict.correct)),
    sourceHit: share(answerable.map((verdict) => verdict.sourceHit)),
    chunkHit10: share(answerable.map((verdict) => verdict.chunkHit!)),
    offTopic: share(perKind('off-topic').map((verdict) => verdict.correct)),
    followUps: share(perKind('follow-up').map((verdict) => verdict.followUp!.correct)),
    perKind: {
      factual: { n: perKind('factual').length, accuracy: share(perKind('factual').map((v) => v.correct)), sourceHit: share(perKind('factual').map((v) => v.sourceHit)), chunkHit10: share(perKind('factual').map((v) => v.chunkHit!)) },
      paraphrased: { n: perKind('paraphrased').length, accuracy: share(perKind('paraphrased').map((v) => v.correct)), sourceHit: share(perKind('paraphrased').map((v) => v.sourceHit)), chunkHit10: share(perKind('paraphrased').map((v) => v.chunkHit!)) },
      followUp: { n: perKind('follow-up').length, firstTurn: share(perKind('follow-up').map((v) => v.correct)), secondTurn: share(perKind('follow-up').map((v) => v.followUp!.correct)) },
      offTopic: { n: perKind('off-topic').length, handled: share(perKind('off-topic').map((v) => v.correct)) },
    },
    retrieval,
  };
}

async function measure(run: AnswerRun<Kept>): Promise<Measured> {
  const { base, token, state } = run;
  const questions = await readQuestions(split);
  const latencies: number[] = [];
  const verdicts = await inFlight(questions, Number(options.concurrency), (question) => judge(base, token, state, question, run.fallbackMessage, latencies));
  return { lead: { split, questions: questions.length }, summary: summarize(verdicts), latencies, corpus: { pages: state.pages }, verdicts };
}

await runAnswerBench<Kept>({ name: 'answers', dataDir: options['data-dir'], report: options.report, ingest: ingestDocs, measure });
