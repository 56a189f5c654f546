/**
 * SQuAD 2.0 as open-domain question answering, through the real paths: starts lore on a database
 * of its own (PGlite, or a fresh database on the PostgreSQL server DATABASE_URL names), ingests
 * every paragraph of SQuAD 2.0's dev and test files (bench/squad/split.ts: 1,204 paragraphs, less
 * the test file's added "Miscellaneous" article) as records of one knowledge base through
 * generic-json jobs, behind a public experience, asks a fixed-seed sample of the questions of one
 * split's 8 articles through POST /api/v2/query (a new session each), and prints one JSON line:
 *
 * - `hit1`, `hit5`: answerable questions whose gold paragraph is the first source, or among the
 *   first five;
 * - `firstSentenceHit`: answerable questions whose answer's first sentence (the text up to its
 *   first citation `[n]`, or its first sentence when it cites nothing) holds a gold answer, both
 *   normalized as SQuAD's official evaluation does (lower case; punctuation, a/an/the and extra
 *   white space removed), as whole words; `answerHit`: the same for the whole answer;
 * - `f1.firstSentence`, `f1.answer`: SQuAD's token F1 of the first sentence and of the whole
 *   answer (citations removed) against the best gold answer, averaged over answerable questions;
 * - `words`: p50 and p90 of the length in words of the first sentence and of the whole answer, over
 *   the answerable questions that were not declined;
 * - `falseDeclines`: answerable questions declined or hedged;
 * - `unanswerable`: the shares of unanswerable questions declined, hedged and answered;
 * - `latencyMs` p50/p95 of the queries, and `counts` of each outcome.
 *
 * An answer is declined when it is the experience's fallback message or has no source; hedged when
 * the response says so (`hedged: true`) or, with sources, opens with the fallback message; else
 * answered. A declined answer holds no gold answer and scores F1 0.
 *
 *   npm run bench:squad -- --squad-dir DIR [--split test|dev] [--answerable 250] [--unanswerable 150]
 *     [--seed 35] [--concurrency 3] [--data-dir DIR] [--report FILE]
 *
 * `--squad-dir` (or SQUAD_DIR) is the `data/` folder of a clone of github.com/chrischute/squad.
 * `--data-dir DIR` (PGlite only) keeps the ingested database in DIR and reuses it on the next run
 * (delete DIR after a change to ingestion). `--report FILE` writes every question with its answer,
 * sources and verdicts. Tune on `dev`; `test` is for reporting.
 */
import { parseArgs } from 'node:util';
import { ask, inFlight, ingestSummary, runAnswerBench, share, type AnswerRun, type Asked, type KeptState, type Measured } from './answer-bench.ts';
import { percentile, round } from './corpus.ts';
import { call, ingestJobs } from './lore-server.ts';
import { bestF1, containsAnswer, firstSentence, withoutCitations, wordCount } from './squad/evaluate.ts';
import { readSquad, sampleQuestions, squadDir, SQUAD_SOURCE, type Split, type SquadParagraph, type SquadQuestion } from './squad/split.ts';

const { values: options } = parseArgs({
  options: {
    split: { type: 'string', default: 'test' },
    'squad-dir': { type: 'string' },
    answerable: { type: 'string', default: '250' },
    unanswerable: { type: 'string', default: '150' },
    // The number: any seed gives a fair sample, this one is the one the figures are for.
    seed: { type: 'string', default: '35' },
    'data-dir': { type: 'string' },
    report: { type: 'string' },
    // Queries in flight at once: the figures are quality, not load.
    concurrency: { type: 'string', default: '3' },
  },
});
const split = options.split as Split;
if (split !== 'dev' && split !== 'test') throw new Error('--split is test or dev.');
const dir = squadDir(options['squad-dir']);
const counts = { answerable: Number(options.answerable), unanswerable: Number(options.unanswerable), seed: Number(options.seed) };
if (!Object.values(counts).every((count) => Number.isInteger(count) && count >= 0)) throw new Error('--answerable, --unanswerable and --seed are whole numbers.');

// Records per generic-json job: 1,204 paragraphs (3.3 MB) in seven jobs.
const RECORDS_PER_JOB = 200;
const URL_PREFIX = 'https://en.wikipedia.org/wiki/';

/** What a kept database holds, so that a later run can reuse it. */
type Kept = KeptState & { paragraphs: number };

/** A paragraph as a record: its article's page with the paragraph's index as the fragment, so a source names its paragraph. */
function recordOf(paragraph: SquadParagraph) {
  return {
    id: paragraph.id,
    title: paragraph.article.replace(/_/g, ' '),
    content: paragraph.context,
    contentType: 'text',
    url: `${URL_PREFIX}${encodeURI(paragraph.article)}#p${paragraph.index}`,
  };
}

/** The paragraph id (`<title>#<index>`) a source's URL names. */
function paragraphOfUrl(url: string | null): string | undefined {
  const match = url?.startsWith(URL_PREFIX) ? /^([^#]+)#p(\d+)$/.exec(url.slice(URL_PREFIX.length)) : null;
  return match ? `${decodeURI(match[1]!)}#${match[2]}` : undefined;
}

const squad = await readSquad(dir);

async function ingestParagraphs(base: string, token: string, workspaceId: string, embedder: string): Promise<Kept> {
  const knowledgeBase = await call(base, 'POST', '/api/v2/knowledge-bases', token, { name: 'squad' });
  const experience = await call(base, 'POST', '/api/v2/experiences', token, { name: 'squad', knowledgeBaseIds: [knowledgeBase.id] });
  const started = performance.now();
  const jobs = await ingestJobs(base, token, knowledgeBase.id, squad.paragraphs.map(recordOf), RECORDS_PER_JOB);
  return {
    paragraphs: squad.paragraphs.length,
    embedder,
    workspaceId,
    knowledgeBaseId: knowledgeBase.id,
    experienceId: experience.id,
    ingest: ingestSummary(jobs, (performance.now() - started) / 1000),
  };
}

type Outcome = 'answered' | 'hedged' | 'declined';

type Verdict = {
  id: string;
  article: string;
  paragraph: string;
  question: string;
  unanswerable: boolean;
  gold: string[];
  answer: string;
  sources: (string | undefined)[];
  outcome: Outcome;
  ms: number;
  /** Answerable questions only: the gold paragraph's rank among the sources (0: absent), and the measures. */
  goldRank?: number;
  firstSentence?: string;
  firstSentenceHit?: boolean;
  answerHit?: boolean;
  f1FirstSentence?: number;
  f1Answer?: number;
};

function outcomeOf(asked: Asked, fallback: string): Outcome {
  const answer = asked.answer.trim();
  if (asked.sources.length === 0 || answer === fallback.trim()) return 'declined';
  return asked.body.hedged === true || answer.startsWith(fallback.trim()) ? 'hedged' : 'answered';
}

async function judge(run: AnswerRun<Kept>, question: SquadQuestion): Promise<Verdict> {
  const asked = await ask(run.base, run.state.experienceId, question.question);
  const sources = asked.sources.map((source) => paragraphOfUrl(source.url));
  const verdict: Verdict = {
    id: question.id,
    article: question.article,
    paragraph: question.paragraphId,
    question: question.question,
    unanswerable: question.unanswerable,
    gold: question.answers,
    answer: asked.answer,
    sources,
    outcome: outcomeOf(asked, run.fallbackMessage),
    ms: round(asked.ms),
  };
  if (question.unanswerable) return verdict;
  const declined = verdict.outcome === 'declined';
  const first = withoutCitations(firstSentence(asked.answer));
  const whole = withoutCitations(asked.answer);
  return {
    ...verdict,
    goldRank: sources.indexOf(question.paragraphId) + 1,
    firstSentence: first,
    firstSentenceHit: !declined && containsAnswer(first, question.answers),
    answerHit: !declined && containsAnswer(whole, question.answers),
    f1FirstSentence: declined ? 0 : round(bestF1(first, question.answers), 4),
    f1Answer: declined ? 0 : round(bestF1(whole, question.answers), 4),
  };
}

const mean = (values: number[]) => (values.length === 0 ? null : round(values.reduce((sum, value) => sum + value, 0) / values.length, 3));
const spread = (values: number[]) => ({ p50: percentile(values, 0.5), p90: percentile(values, 0.9) });

function summarize(verdicts: Verdict[]) {
  const answerable = verdicts.filter((verdict) => !verdict.unanswerable);
  const unanswerable = verdicts.filter((verdict) => verdict.unanswerable);
  const given = answerable.filter((verdict) => verdict.outcome !== 'declined');
  const count = (items: Verdict[], outcome: Outcome) => items.filter((verdict) => verdict.outcome === outcome).length;
  return {
    hit1: share(answerable.map((verdict) => verdict.goldRank === 1)),
    hit5: share(answerable.map((verdict) => verdict.goldRank! >= 1 && verdict.goldRank! <= 5)),
    firstSentenceHit: share(answerable.map((verdict) => verdict.firstSentenceHit!)),
    answerHit: share(answerable.map((verdict) => verdict.answerHit!)),
    f1: { firstSentence: mean(answerable.map((verdict) => verdict.f1FirstSentence!)), answer: mean(answerable.map((verdict) => verdict.f1Answer!)) },
    words: {
      firstSentence: spread(given.map((verdict) => wordCount(verdict.firstSentence!))),
      answer: spread(given.map((verdict) => wordCount(withoutCitations(verdict.answer)))),
    },
    falseDeclines: share(answerable.map((verdict) => verdict.outcome !== 'answered')),
    unanswerable: Object.fromEntries((['declined', 'hedged', 'answered'] as const).map((outcome) => [outcome, share(unanswerable.map((verdict) => verdict.outcome === outcome))])),
    counts: {
      questions: verdicts.length,
      answerable: answerable.length,
      answerableDeclined: count(answerable, 'declined'),
      answerableHedged: count(answerable, 'hedged'),
      unanswerable: unanswerable.length,
      unanswerableDeclined: count(unanswerable, 'declined'),
      unanswerableHedged: count(unanswerable, 'hedged'),
    },
  };
}

async function measure(run: AnswerRun<Kept>): Promise<Measured> {
  const questions = sampleQuestions(squad.questions(split), counts);
  const verdicts = await inFlight(questions, Number(options.concurrency), (question) => judge(run, question));
  return {
    lead: { split, seed: counts.seed },
    summary: summarize(verdicts),
    latencies: verdicts.map((verdict) => verdict.ms),
    corpus: { paragraphs: run.state.paragraphs, data: SQUAD_SOURCE },
    verdicts,
  };
}

await runAnswerBench<Kept>({ name: 'squad', dataDir: options['data-dir'], report: options.report, ingest: ingestParagraphs, measure });
