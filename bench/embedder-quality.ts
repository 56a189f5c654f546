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
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import { BuiltinFastEmbeddingProvider, type TokenWeighting } from '../src/core/providers/embeddings/builtin-fast.ts';
import { createEmbeddingProvider } from '../src/core/providers/embeddings/create.ts';
import { DEFAULT_SCIFACT_DIR, quality, readSciFact, type Split } from './scifact.ts';

const { values: options } = parseArgs({
  options: {
    split: { type: 'string', default: 'train' },
    docs: { type: 'string' },
    dataset: { type: 'string', default: DEFAULT_SCIFACT_DIR },
    seed: { type: 'string', default: '1' },
    // builtin-fast only: the token weighting to measure, instead of the provider's default.
    weighting: { type: 'string' },
    smoothing: { type: 'string' },
    components: { type: 'string' },
  },
});
if (options.weighting !== undefined && options.weighting !== 'sif' && options.weighting !== 'mean') throw new Error('--weighting is sif or mean.');

/** Indices of the `count` highest scores, best first. */
function top(scores: Float32Array, count: number): number[] {
  const order = Array.from(scores.keys());
  order.sort((left, right) => scores[right]! - scores[left]!);
  return order.slice(0, count);
}

const round = (value: number, digits = 4) => Number(value.toFixed(digits));

const { documents, corpus, splits } = await readSciFact(
  options.dataset,
  [options.split],
  options.docs === undefined ? undefined : Number(options.docs),
  Number(options.seed),
);
const { queries, qrels } = splits.get(options.split as Split)!;

const config = loadConfig();
const embedder =
  config.embeddingsProvider === 'builtin-fast'
    ? new BuiltinFastEmbeddingProvider({
        modelsDir: config.modelsDir,
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

const rankings = new Map<string, string[]>();
const scores = new Float32Array(documents.length);
for (const [index, query] of queries.entries()) {
  const vector = queryVectors[index]!;
  for (let row = 0; row < documents.length; row++) {
    let dot = 0;
    const offset = row * dimension;
    for (let column = 0; column < dimension; column++) dot += vector[column]! * matrix[offset + column]!;
    scores[row] = dot;
  }
  rankings.set(query._id, top(scores, 100).map((row) => documents[row]!._id));
}

console.log(
  JSON.stringify({
    provider: embedder.name,
    model: embedder.model,
    ...(embedder instanceof BuiltinFastEmbeddingProvider ? { weighting: options.weighting ?? 'sif', smoothing: Number(options.smoothing ?? 1e-3), components: Number(options.components ?? 128) } : {}),
    split: options.split,
    queries: queries.length,
    documents: documents.length,
    corpus,
    ...quality(rankings, qrels),
    warmUpMs: round(warmUpMs, 0),
    warmUp,
    documentSeconds: round(documentSeconds, 2),
    documentsPerSecond: round(documents.length / documentSeconds, 1),
    averageDocumentChars: round(documents.reduce((sum, document) => sum + document.title.length + 1 + document.text.length, 0) / documents.length, 0),
    querySeconds: round(querySeconds, 3),
  }),
);
