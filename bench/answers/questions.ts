/**
 * The questions of `bench:answers` (bench/answers/questions/*.json), written by reading the
 * pages: each with the facts a correct answer must contain and the pages that hold them. They are
 * split in two fixed halves, dev (to tune on) and test (to report), alternating within each file
 * and kind so that both halves have every kind in the same proportion.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export type QuestionKind = 'factual' | 'paraphrased' | 'follow-up' | 'off-topic';

/** One turn to ask: every alternative set of `facts` ("a|b") must appear in the answer; one of `pages` among its sources. */
export type Turn = { question: string; facts: string[]; pages: string[] };

export type Question = Turn & { id: string; kind: QuestionKind; followUp?: Turn };

export type Split = 'dev' | 'test' | 'all';

const QUESTIONS_DIR = new URL('./questions/', import.meta.url);

/** The questions of a split, in id order. */
export async function readQuestions(split: Split): Promise<Question[]> {
  const dir = QUESTIONS_DIR.pathname;
  const chosen: Question[] = [];
  for (const file of (await readdir(dir)).filter((name) => name.endsWith('.json')).sort()) {
    const questions = JSON.parse(await readFile(join(dir, file), 'utf8')) as Question[];
    const byKind = new Map<QuestionKind, Question[]>();
    for (const question of [...questions].sort((a, b) => a.id.localeCompare(b.id))) {
      byKind.set(question.kind, [...(byKind.get(question.kind) ?? []), question]);
    }
    for (const group of byKind.values()) {
      group.forEach((question, index) => {
        if (split === 'all' || (index % 2 === 0) === (split === 'dev')) chosen.push(question);
      });
    }
  }
  return chosen.sort((a, b) => a.id.localeCompare(b.id));
}
