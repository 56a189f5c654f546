/**
 * BEIR SciFact as the retrieval benchmarks read it (see /work/shared/datasets/scifact/README.md):
 * the corpus, the queries judged in one qrels split, an optional subsample, and the metrics.
 * The data set is read where it lies, never copied into the repository.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { random } from './corpus.ts';

export const DEFAULT_SCIFACT_DIR = '/work/shared/datasets/scifact';

export type Document = { _id: string; title: string; text: string };
export type Query = { _id: string; text: string };
export type Split = 'train' | 'test';

/** The queries one qrels split judges, and their relevant document ids. */
export type Judgments = { queries: Query[]; qrels: Map<string, Set<string>> };

export type SciFact = {
  /** The documents to index: the whole corpus, or the subsample `docs` asked for. */
  documents: Document[];
  /** How the documents were chosen, for the output line. */
  corpus: string;
  splits: Map<Split, Judgments>;
};

async function readJsonLines<T>(path: string): Promise<T[]> {
  const text = await readFile(path, 'utf8');
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as T);
}

/** Relevant document ids per query id (SciFact's judgments are all of grade 1). */
async function readQrels(path: string): Promise<Map<string, Set<string>>> {
  const relevant = new Map<string, Set<string>>();
  const lines = (await readFile(path, 'utf8')).split('\n').slice(1);
  for (const line of lines) {
    const [queryId, documentId, score] = line.trim().split('\t');
    if (!queryId || !documentId || Number(score) <= 0) continue;
    if (!relevant.has(queryId)) relevant.set(queryId, new Set());
    relevant.get(queryId)!.add(documentId);
  }
  return relevant;
}

/** The judged documents plus `others` unjudged ones drawn at random, in corpus order. */
function subsample(corpus: Document[], judged: Set<string>, others: number, seed: number): Document[] {
  const unjudged = corpus.filter((document) => !judged.has(document._id));
  const next = random(seed);
  for (let index = unjudged.length - 1; index > 0; index--) {
    const swap = Math.floor(next() * (index + 1));
    [unjudged[index], unjudged[swap]] = [unjudged[swap]!, unjudged[index]!];
  }
  const kept = new Set([...judged, ...unjudged.slice(0, others).map((document) => document._id)]);
  return corpus.filter((document) => kept.has(document._id));
}

/**
 * Reads the data set in `dir` for the given splits. With `docs`, keeps the documents judged for
 * the splits' queries plus `docs` random others (fixed `seed`): scores on such a subsample are
 * higher than on the whole corpus and only comparable between runs on the same subsample.
 */
export async function readSciFact(dir: string, splits: readonly string[], docs?: number, seed = 1): Promise<SciFact> {
  if (splits.length === 0 || splits.some((split) => split !== 'train' && split !== 'test')) throw new Error('--split is train or test.');
  const corpus = await readJsonLines<Document>(join(dir, 'corpus.jsonl'));
  const allQueries = await readJsonLines<Query>(join(dir, 'queries.jsonl'));
  const corpusIds = new Set(corpus.map((document) => document._id));
  const judged = new Set<string>();
  const judgments = new Map<Split, Judgments>();
  for (const split of splits as Split[]) {
    const qrels = await readQrels(join(dir, 'qrels', `${split}.tsv`));
    const queries = allQueries.filter((query) => qrels.has(query._id));
    for (const query of queries) for (const id of qrels.get(query._id)!) if (corpusIds.has(id)) judged.add(id);
    judgments.set(split, { queries, qrels });
  }
  return {
    documents: docs === undefined ? corpus : subsample(corpus, judged, docs, seed),
    corpus: docs === undefined ? 'full' : `judged documents plus ${docs} random others (seed ${seed})`,
    splits: judgments,
  };
}

export type Quality = { ndcg10: number; recall10: number; recall100: number };

/** Mean nDCG@10, recall@10 and recall@100 of ranked document ids (best first) per query id. */
export function quality(rankings: Map<string, string[]>, qrels: Map<string, Set<string>>): Quality {
  let ndcg10 = 0;
  let recall10 = 0;
  let recall100 = 0;
  for (const [queryId, ranked] of rankings) {
    const relevant = qrels.get(queryId)!;
    let dcg = 0;
    ranked.slice(0, 10).forEach((id, rank) => {
      if (relevant.has(id)) dcg += 1 / Math.log2(rank + 2);
    });
    let ideal = 0;
    for (let rank = 0; rank < Math.min(relevant.size, 10); rank++) ideal += 1 / Math.log2(rank + 2);
    ndcg10 += dcg / ideal;
    recall10 += ranked.slice(0, 10).filter((id) => relevant.has(id)).length / relevant.size;
    recall100 += ranked.slice(0, 100).filter((id) => relevant.has(id)).length / relevant.size;
  }
  const round = (value: number) => Number((value / rankings.size).toFixed(4));
  return { ndcg10: round(ndcg10), recall10: round(recall10), recall100: round(recall100) };
}
