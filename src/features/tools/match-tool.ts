import type { EmbeddingProvider } from '../../core/providers/embeddings/provider.ts';
import { exampleSimilarity } from './example-similarity.ts';
import { extractArguments } from './extract-arguments.ts';
import { argumentProblems, parameterSchema, requiredParameters } from './tool-parameters.ts';
import type { Tool } from './tool.schema.ts';

/** A tool a question asks for, offline: with the arguments found, and the required ones not found. */
export type ToolMatch = { tool: Tool; args: Record<string, unknown>; missing: string[]; similarity: number };

/** What matching found: the tool, if any, and the question's vector, which retrieval reuses. */
export type ToolMatching = { match: ToolMatch | undefined; vector: Float32Array };

/**
 * The tool a question asks for, for the offline generator: the tool whose examples are closest to
 * the question, when that similarity reaches the encoder's `toolCosine` (measured on CLINC150 by
 * bench:tool-trigger), with the arguments the question supplies. `texts` are where arguments are
 * looked for, latest message first (see extractArguments); `question` is what is compared.
 */
export async function matchTool(
  embedder: EmbeddingProvider,
  tools: readonly Tool[],
  input: { question: string; texts: readonly string[]; signal?: AbortSignal },
): Promise<ToolMatching> {
  const options = { question: true, ...(input.signal ? { signal: input.signal } : {}) };
  const [vector] = await embedder.embed([input.question], options);
  let best: { tool: Tool; similarity: number } | undefined;
  for (const tool of tools) {
    const similarity = await exampleSimilarity(embedder, vector!, tool.examples, input.signal);
    if (similarity >= embedder.toolCosine && (!best || similarity > best.similarity)) best = { tool, similarity };
  }
  if (!best) return { match: undefined, vector: vector! };
  const { tool } = best;
  const accepts = (name: string, value: unknown) => argumentProblems(parameterSchema(tool.parameters, name), value).length === 0;
  const args = extractArguments(tool.parameters, input.texts, accepts);
  const missing = requiredParameters(tool.parameters).filter((name) => args[name] === undefined);
  return { match: { tool, args, missing, similarity: best.similarity }, vector: vector! };
}
