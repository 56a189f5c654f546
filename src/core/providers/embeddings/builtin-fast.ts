import { yieldEvery } from '../../yield-every.ts';
import type { Tokenizer } from './use-lite.ts';
import { normalize, type EmbeddingProvider, type EmbedOptions } from './provider.ts';
import { DIMENSION, loadStaticTable, readVocabulary, type StaticTable, type Vocabulary } from './static-table.ts';

/**
 * How much a token counts in the mean. `sif`: a/(a + p(token)) (Arora et al., 2017), with p the
 * vocabulary's own unigram probability, so "the" and "," count far less than "amyloid"; `mean`:
 * every token the same.
 */
export type TokenWeighting = 'sif' | 'mean';

export type BuiltinFastEmbeddingOptions = {
  /** Directory the distilled table is kept in (MODELS_DIR). */
  modelsDir: string;
  /** Token weighting (default `sif`). */
  weighting?: TokenWeighting;
  /** The `a` of the `sif` weighting (default 1e-3). */
  smoothing?: number;
  /** Worker threads that distil the table at the first start (default: one per core). */
  threads?: number;
  /** Distils only the vocabulary ids below this (default: all 8,000); for tests. */
  tokens?: number;
  /** Principal directions removed from the table (default 128, see `static-table.ts`). */
  components?: number;
  /** The similarity from which a question triggers a tool (TOOLS_MATCH_COSINE; default: the one measured for this encoder). */
  toolCosine?: number | undefined;
};

/**
 * The tokenizer keeps a text's first 128 tokens (what the encoder reads); this mode costs the same
 * per token however long the text, so it reads all of it, in slices short enough to stay under 128
 * tokens (SciFact abstracts run at about 4 characters per token).
 */
const SLICE_CHARACTERS = 300;

// bench:tool-trigger (bench/README.md, "Tools"): on CLINC150 val with 5 examples a tool, the
// smallest threshold that lets at most 2 % of out-of-scope questions trigger a tool (0.019);
// on test it triggers 0.83 of a tool's questions, 0.020 of out-of-scope and 0.043 of other tools' ones.
const TOOL_COSINE = 0.29;

type Loaded = { tokenizer: Tokenizer; table: StaticTable; weights: Float32Array };

/**
 * A static version of the builtin encoder: a text's vector is the weighted mean of the distilled
 * vectors of its tokens (see `static-table.ts`), computed on the calling thread in microseconds
 * instead of a transformer pass. The table is distilled at the first `embed` or `warmUp` of a
 * DATA_DIR and read from there afterwards.
 */
export class BuiltinFastEmbeddingProvider implements EmbeddingProvider {
  readonly name = 'builtin-fast';
  readonly model = 'universal-sentence-encoder-lite-static';
  readonly dimension = DIMENSION;
  // bench:answers dev (bench/history.md, "Answers on real documentation"): off-topic questions came as close as 0.25 to a
  // chunk; a static token table separates meaning less sharply than a transformer.
  readonly relevantCosine = 0.3;
  readonly toolCosine: number;
  private readonly options: BuiltinFastEmbeddingOptions;
  private loaded: Promise<Loaded> | undefined;
  private closed = false;

  constructor(options: BuiltinFastEmbeddingOptions) {
    this.options = options;
    this.toolCosine = options.toolCosine ?? TOOL_COSINE;
  }

  /** Loads, or at the first start distils, the table; tells which and how long it took. */
  async warmUp(): Promise<{ distilled: boolean; milliseconds: number; path: string }> {
    const { table } = await this.load();
    return { distilled: table.distilled, milliseconds: Math.round(table.milliseconds), path: table.path };
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.closed) throw new Error('The builtin-fast embedder is closed.');
    const loaded = await this.load();
    const vectors: Float32Array[] = [];
    // A bulk call yields between slices so that requests keep being served meanwhile. A chunk of
    // 700 characters takes 0.4-1 ms: a yield every 64 texts held the thread for 60-400 ms at a
    // time during an ingestion (bench/healthz-during-ingest.ts, issue 10).
    const slice = yieldEvery();
    for (const text of texts) {
      await slice();
      options.signal?.throwIfAborted();
      vectors.push(embedText(text, loaded));
    }
    return vectors;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.loaded?.catch(() => {});
  }

  private load(): Promise<Loaded> {
    this.loaded ??= (async () => {
      // Imported here: use-lite.ts brings TensorFlow.js along, which a server on another provider never needs.
      const { Tokenizer } = await import('./use-lite.ts');
      const vocabulary = await readVocabulary();
      const table = await loadStaticTable(vocabulary, this.options);
      return { tokenizer: new Tokenizer(vocabulary), table, weights: tokenWeights(vocabulary, this.options) };
    })();
    // A failed load is retried by the next call instead of failing every call after it.
    this.loaded.catch(() => {
      this.loaded = undefined;
    });
    return this.loaded;
  }
}

function tokenWeights(vocabulary: Vocabulary, options: BuiltinFastEmbeddingOptions): Float32Array {
  const smoothing = options.smoothing ?? 1e-3;
  const weighting = options.weighting ?? 'sif';
  return Float32Array.from(vocabulary, ([, logProbability]) =>
    weighting === 'mean' ? 1 : smoothing / (smoothing + Math.exp(logProbability)),
  );
}

function embedText(text: string, { tokenizer, table, weights }: Loaded): Float32Array {
  const vector = new Float32Array(DIMENSION);
  for (const slice of slices(text)) {
    for (const id of tokenizer.encode(slice)) {
      const weight = weights[id]!;
      const offset = id * DIMENSION;
      for (let index = 0; index < DIMENSION; index++) vector[index]! += weight * table.vectors[offset + index]!;
    }
  }
  return normalize(vector);
}

/** Cuts a text at spaces into slices of at most SLICE_CHARACTERS (a longer word is cut where it must be). */
function slices(text: string): string[] {
  const result: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + SLICE_CHARACTERS, text.length);
    const space = end < text.length ? text.lastIndexOf(' ', end) : -1;
    if (space > start) end = space;
    result.push(text.slice(start, end));
    // The space a slice ends at is dropped: the tokenizer marks the next slice's start itself.
    start = space > start ? end + 1 : end;
  }
  return result;
}

