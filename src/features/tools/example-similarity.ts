import type { EmbeddingProvider } from '../../core/providers/embeddings/provider.ts';

// Example vectors are kept between questions: an experience's examples are the same on every
// query, and 16 tools × 20 examples = 320 vectors is the most one experience has.
const CACHED_EXAMPLES = 4096;
const cache = new Map<string, Float32Array>();

function cacheKey(embedder: EmbeddingProvider, text: string): string {
  return `${embedder.name}\u0000${embedder.model}\u0000${text}`;
}

/** The vectors of `examples`, embedding only those not seen before (oldest evicted first). */
async function exampleVectors(embedder: EmbeddingProvider, examples: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
  const missing = [...new Set(examples.filter((text) => !cache.has(cacheKey(embedder, text))))];
  if (missing.length > 0) {
    const vectors = await embedder.embed(missing, { question: true, ...(signal ? { signal } : {}) });
    missing.forEach((text, index) => {
      cache.set(cacheKey(embedder, text), vectors[index]!);
      if (cache.size > CACHED_EXAMPLES) cache.delete(cache.keys().next().value!);
    });
  }
  return examples.map((text) => cache.get(cacheKey(embedder, text))!);
}

function cosine(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!;
  return sum;
}

/**
 * How close a question is to a tool's examples: the highest cosine similarity between the
 * question's vector and an example's (the vectors are unit length). One example close to the
 * question is what matters: examples name different ways of asking, and an average would punish
 * a tool for having many.
 */
export async function exampleSimilarity(
  embedder: EmbeddingProvider,
  question: Float32Array,
  examples: readonly string[],
  signal?: AbortSignal,
): Promise<number> {
  const vectors = await exampleVectors(embedder, examples, signal);
  return vectors.reduce((best, vector) => Math.max(best, cosine(question, vector)), -1);
}
