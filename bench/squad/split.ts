/**
 * SQuAD 2.0 as bench:squad reads it, and as a script that trains on it must read it, so that
 * training and tuning never see the test questions. The files are the public repository
 * chrischute/squad's `data/dev-v2.0.json` (half of SQuAD 2.0's official dev set: 16 articles,
 * 6,078 questions with gold answer spans, about half unanswerable) and `data/test-v2.0.json` (the
 * other half's 19 articles plus an added "Miscellaneous" one, answers withheld), CC BY-SA 4.0.
 * They are read where they lie, never copied into the repository.
 *
 * The split: dev-v2.0.json's 16 article titles sorted (JavaScript's default sort); the first 8 are
 * for training and tuning (`dev`), the last 8 for reporting (`test`).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { random, shuffled } from '../corpus.ts';

/** Where the data comes from and under which licence, for the output and any trained model's notes. */
export const SQUAD_SOURCE = 'SQuAD 2.0 dev (github.com/chrischute/squad, data/dev-v2.0.json and data/test-v2.0.json), CC BY-SA 4.0';

/** The 8 articles of dev-v2.0.json that sort first: the only ones to train and tune on. */
export const DEV_ARTICLES = [
  '1973_oil_crisis',
  'Computational_complexity_theory',
  'European_Union_law',
  'Force',
  'French_and_Indian_War',
  'Harvard_University',
  'Huguenot',
  'Immune_system',
] as const;

/** The 8 articles of dev-v2.0.json that sort last: for reporting only. */
export const TEST_ARTICLES = [
  'Imperialism',
  'Islamism',
  'Normans',
  'Packet_switching',
  'Scottish_Parliament',
  'Steam_engine',
  'Warsaw',
  'Yuan_dynasty',
] as const;

export type Split = 'dev' | 'test';

/** The article test-v2.0.json adds to Wikipedia's: not a Wikipedia article, left out of the knowledge base. */
const ADDED_ARTICLE = 'Miscellaneous';

/** A paragraph of either file: `id` is `<title>#<index>`, the index counted from 0 within its article. */
export type SquadParagraph = { id: string; article: string; index: number; context: string };

/** A question of dev-v2.0.json; `answers` are its distinct gold spans, none when it is unanswerable. */
export type SquadQuestion = { id: string; question: string; answers: string[]; unanswerable: boolean; article: string; paragraphId: string };

export type Squad = {
  /** Every paragraph of both files in file order, less the added article's. */
  paragraphs: SquadParagraph[];
  /** The questions of one split's articles, in file order. */
  questions(split: Split): SquadQuestion[];
};

type RawFile = {
  data: { title: string; paragraphs: { context: string; qas: { id: string; question: string; is_impossible?: boolean; answers: { text: string }[] }[] }[] }[];
};

const FILES = ['dev-v2.0.json', 'test-v2.0.json'] as const;

/** The directory that holds both files: `dir` as given, else SQUAD_DIR; an error says how to get them. */
export function squadDir(dir: string | undefined): string {
  const chosen = dir ?? process.env.SQUAD_DIR;
  const missing = chosen === undefined ? FILES : FILES.filter((file) => !existsSync(join(chosen, file)));
  if (chosen === undefined || missing.length > 0) {
    throw new Error(
      `${chosen === undefined ? 'No SQuAD directory given' : `${missing.join(' and ')} not found in ${chosen}`}: ` +
        'git clone https://github.com/chrischute/squad, then pass --squad-dir <the clone>/data (or set SQUAD_DIR).',
    );
  }
  return chosen;
}

/** Reads both files in `dir`; fails unless dev-v2.0.json holds exactly the 16 articles of the split. */
export async function readSquad(dir: string): Promise<Squad> {
  const [dev, test] = await Promise.all(FILES.map(async (file) => JSON.parse(await readFile(join(dir, file), 'utf8')) as RawFile));
  const titles = dev!.data.map((article) => article.title).sort();
  if (titles.join('\n') !== [...DEV_ARTICLES, ...TEST_ARTICLES].join('\n')) throw new Error(`${join(dir, FILES[0])} is not SQuAD 2.0's dev set: its articles are ${titles.join(', ')}.`);
  const paragraphs = [...dev!.data, ...test!.data]
    .filter((article) => article.title !== ADDED_ARTICLE)
    .flatMap((article) => article.paragraphs.map((paragraph, index) => ({ id: `${article.title}#${index}`, article: article.title, index, context: paragraph.context })));
  return {
    paragraphs,
    questions(split) {
      const articles: readonly string[] = split === 'dev' ? DEV_ARTICLES : TEST_ARTICLES;
      return dev!.data
        .filter((article) => articles.includes(article.title))
        .flatMap((article) =>
          article.paragraphs.flatMap((paragraph, index) =>
            paragraph.qas.map((qa) => ({
              id: qa.id,
              question: qa.question,
              answers: [...new Set(qa.answers.map((answer) => answer.text))],
              unanswerable: qa.is_impossible === true,
              article: article.title,
              paragraphId: `${article.title}#${index}`,
            })),
          ),
        );
    },
  };
}

/**
 * `answerable` answerable and `unanswerable` unanswerable questions drawn at random (mulberry32 of
 * `seed`). Each kind is shuffled whole before the first ones are taken, so a smaller sample is the
 * start of a larger one with the same seed.
 */
export function sampleQuestions(questions: readonly SquadQuestion[], counts: { answerable: number; unanswerable: number; seed: number }): SquadQuestion[] {
  const next = random(counts.seed);
  const answerable = shuffled(questions.filter((question) => !question.unanswerable), next);
  const unanswerable = shuffled(questions.filter((question) => question.unanswerable), next);
  if (counts.answerable > answerable.length || counts.unanswerable > unanswerable.length) {
    throw new Error(`the split has ${answerable.length} answerable and ${unanswerable.length} unanswerable questions.`);
  }
  return [...answerable.slice(0, counts.answerable), ...unanswerable.slice(0, counts.unanswerable)];
}
