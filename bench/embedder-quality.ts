/**
 * Retrieval quality of the embedder alone on BEIR SciFact: embeds the corpus (title and text) and
 * the queries of one qrels split, ranks every document for every query by cosine in memory (no
 * database), and prints one JSON line with nDCG@10, recall@10, recall@100 and the embedding time.
 *
 *   node --import tsx bench/embedder-quality.ts [--split train|test] [--docs N] [--dataset DIR]
 *   EMBEDDINGS_PROVIDER=builtin-fast node --import tsx bench/embedder-quality.ts --docs 1000 [--weighting sif|mean] [--smoothing A] [--components K]
 *
 * `--docs N` keeps the documents judged for the split's queries plus N others drawn at random
 * (fixed seed), so a slow embedder finishes in minutes; scores on such a subsample are higher than
 * on the whole corpus and only comparable between runs on the same subsample (the output says
 * which). Tune on `train`; `test` is for reporting. The data set is read where it lies
 * (default /work/shared/datasets/scifact, see its README), never copied.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import { BuiltinFastEmbeddingProvider, type TokenWeighting } from '../src/core/providers/embeddings/builtin-fast.ts';
import { createEmbeddingProvider } from '../src/core/providers/embeddings/create.ts';
import { random } from './corpus.ts';

const { values: options } = parseArgs({
  options: {
    split: { type: 'string', default: 'train' },
    docs: { type: 'string' },
    dataset: { type: 'string', default: '/work/shared/datasets/scifact' },
    seed: { type: 'string', default: '1' },
    // builtin-fast only: the token weighting to measure, instead of the provider's default.
    weighting: { type: 'string' },
    smoothing: { type: 'string' },
    components: { type: 'string' },
  },
});
if (options.split !== 'train' && options.split !== 'test') throw new Error('--split is train or test.');
if (options.weighting !== undefined && options.weighting !== 'sif' && options.weighting !== 'mean') throw new Error('--weighting is sif or mean.');

type Document = { _id: string; title: string; text: string };
type Query = { _id: string; text: string };

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

/** Indices of the `count` highest scores, best first. */
function top(scores: Float32Array, count: number): number[] {
  const order = Array.from(scores.keys());
  order.sort((left, right) => scores[right]! - scores[left]!);
  return order.slice(0, count);
}

const round = (value: number, digits = 4) => Number(value.toFixed(digits));

const corpus = await readJsonLines<Document>(join(options.dataset, 'corpus.jsonl'));
const allQueries = await readJsonLines<Query>(join(options.dataset, 'queries.jsonl'));
const qrels = await readQrels(join(options.dataset, 'qrels', `${options.split}.tsv`));
const corpusIds = new Set(corpus.map((document) => document._id));
const queries = allQueries.filter((query) => qrels.has(query._id));
const judged = new Set(queries.flatMap((query) => [...qrels.get(query._id)!].filter((id) => corpusIds.has(id))));
const documents = options.docs === undefined ? corpus : subsample(corpus, judged, Number(options.docs), Number(options.seed));

const config = loadConfig();
const embedder =
  config.embeddingsProvider === 'builtin-fast'
    ? new BuiltinFastEmbeddingProvider({
        dataDir: config.dataDir,
        threads: config.embeddingsThreads,
        weighting: options.weighting as TokenWeighting | undefined,
        smoothing: options.smoothing === undefined ? undefined : Number(options.smoothing),
        components: options.components === undefined ? undefined : Number(options.components),
      })
    : createEmbeddingProvider(config);
let started = performance.now();
const warmUp = 'warmUp' in embedder && typeof embedder.warmUp === 'function' ? await (embedder.warmUp as () => Promise<unknown>)() : undefined;
const warmUpMs = performance.now() - started;

started = performance.now();
const documentVectors = await embedder.embed(documents.map((document) => `${document.title} ${document.text}`));
const documentSeconds = (performance.now() - started) / 1000;
started = performance.now();
const queryVectors = await embedder.embed(queries.map((query) => query.text));
const querySeconds = (performance.now() - started) / 1000;
await embedder.close();

const dimension = documentVectors[0]!.length;
const matrix = new Float32Array(documents.length * dimension);
documentVectors.forEach((vector, row) => matrix.set(vector, row * dimension));

let ndcg10 = 0;
let recall10 = 0;
let recall100 = 0;
const scores = new Float32Array(documents.length);
for (const [index, query] of queries.entries()) {
  const vector = queryVectors[index]!;
  for (let row = 0; row < documents.length; row++) {
    let dot = 0;
    const offset = row * dimension;
    for (let column = 0; column < dimension; column++) dot += vector[column]! * matrix[offset + column]!;
    scores[row] = dot;
  }
  const relevant = qrels.get(query._id)!;
  const ranked = top(scores, 100).map((row) => documents[row]!._id);
  let dcg = 0;
  ranked.slice(0, 10).forEach((id, rank) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(rank + 2);
  });
  let ideal = 0;
  for (let rank = 0; rank < Math.min(relevant.size, 10); rank++) ideal += 1 / Math.log2(rank + 2);
  ndcg10 += dcg / ideal;
  recall10 += ranked.slice(0, 10).filter((id) => relevant.has(id)).length / relevant.size;
  recall100 += ranked.filter((id) => relevant.has(id)).length / relevant.size;
}

console.log(
  JSON.stringify({
    provider: embedder.name,
    model: embedder.model,
    ...(embedder instanceof BuiltinFastEmbeddingProvider ? { weighting: options.weighting ?? 'sif', smoothing: Number(options.smoothing ?? 1e-3), components: Number(options.components ?? 128) } : {}),
    split: options.split,
    queries: queries.length,
    documents: documents.length,
    corpus: options.docs === undefined ? 'full' : `judged documents plus ${options.docs} random others (seed ${options.seed})`,
    ndcg10: round(ndcg10 / queries.length),
    recall10: round(recall10 / queries.length),
    recall100: round(recall100 / queries.length),
    warmUpMs: round(warmUpMs, 0),
    warmUp,
    documentSeconds: round(documentSeconds, 2),
    documentsPerSecond: round(documents.length / documentSeconds, 1),
    averageDocumentChars: round(documents.reduce((sum, document) => sum + document.title.length + 1 + document.text.length, 0) / documents.length, 0),
    querySeconds: round(querySeconds, 3),
  }),
);
