/** Turns texts into vectors; the ingestion pipeline and the query path depend only on this. */
export interface EmbeddingProvider {
  /** `builtin` or `openai`. */
  readonly name: string;
  /** The model the vectors come from, e.g. `universal-sentence-encoder-lite` or an OpenAI model name. */
  readonly model: string;
  /**
   * Length of every vector. 512 for builtin. For openai: `OPENAI_EMBEDDINGS_DIMENSIONS`, else the
   * model's published size when the model is a known OpenAI one, else 0 until the first successful
   * `embed` call has shown it.
   */
  readonly dimension: number;
  /**
   * The cosine similarity from which a chunk counts as relevant to a question: each encoder has
   * its own scale (a static token table spreads texts wider than a transformer), measured on
   * bench:answers dev so that off-topic questions stay below it.
   */
  readonly relevantCosine: number;
  /**
   * The similarity to one of a tool's examples (`exampleSimilarity`) from which a question triggers
   * the tool with the offline generator: the smallest threshold that keeps the out-of-scope
   * questions triggering a tool at 2 % or fewer, measured by bench:tool-trigger on CLINC150 val with
   * 5 examples a tool. CLINC150 test at it (bench/README.md, "Tools"): builtin-fast 0.29 triggers
   * 0.83 of a tool's questions, 0.020 of out-of-scope ones and 0.043 of other tools' ones;
   * builtin 0.5 triggers 0.95, 0.026 and 0.072. openai's 0.5 is a guess. TOOLS_MATCH_COSINE overrides it.
   */
  readonly toolCosine: number;
  /** Embeds texts in order; batches internally; vectors are L2-normalized. Rejects on failure after retries. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Releases threads and connections; `embed` must not be called afterwards. */
  close(): Promise<void>;
}

export type EmbedOptions = {
  /** Abandons the call: pending batches are dropped and the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * A visitor's question (the query path), not bulk work: the builtin encoder serves it before
   * queued bulk batches and keeps a thread for questions while they come.
   */
  question?: boolean;
};

/** Scales a vector to unit length in place (a zero vector stays zero) and returns it. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index]! *= scale;
  return vector;
}

/**
 * Embeds each distinct text once: `embedDistinct` receives the distinct texts, and its vectors are
 * handed back in the caller's order (repeated texts share one vector object).
 */
export async function embedDeduplicated(
  texts: readonly string[],
  embedDistinct: (distinct: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  const slotOf = new Map<string, number>();
  const distinct: string[] = [];
  const slots = texts.map((text) => {
    let slot = slotOf.get(text);
    if (slot === undefined) {
      slot = distinct.length;
      slotOf.set(text, slot);
      distinct.push(text);
    }
    return slot;
  });
  const vectors = await embedDistinct(distinct);
  return slots.map((slot) => vectors[slot]!);
}

/** Splits a list into consecutive slices of at most `size` items. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}
