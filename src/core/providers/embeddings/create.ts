import type { Config } from '../../config.ts';
import { BuiltinFastEmbeddingProvider } from './builtin-fast.ts';
import { BuiltinEmbeddingProvider } from './builtin.ts';
import { OpenAiEmbeddingProvider } from './openai.ts';
import type { EmbeddingProvider } from './provider.ts';

/** The embedding provider `EMBEDDINGS_PROVIDER` names, configured from the environment. */
export function createEmbeddingProvider(config: Config): EmbeddingProvider {
  switch (config.embeddingsProvider) {
    case 'builtin':
      return new BuiltinEmbeddingProvider({ threads: config.embeddingsThreads, batchSize: config.embeddingsBatchSize, toolCosine: config.toolsMatchCosine });
    case 'builtin-fast':
      return new BuiltinFastEmbeddingProvider({ modelsDir: config.modelsDir, threads: config.embeddingsThreads, toolCosine: config.toolsMatchCosine });
    case 'openai':
      return new OpenAiEmbeddingProvider({
        baseUrl: config.openaiBaseUrl,
        apiKey: config.openaiApiKey,
        model: config.openaiEmbeddingsModel,
        dimensions: config.openaiEmbeddingsDimensions,
        batchSize: config.embeddingsBatchSize,
        timeoutMs: config.embeddingsTimeoutMs,
        maxRetries: config.embeddingsMaxRetries,
        toolCosine: config.toolsMatchCosine,
      });
  }
}

/**
 * Readies an offline encoder before its first request: builtin-fast reads its token table, or
 * distils it at the first start of a models directory (about a minute of every core). Undefined
 * for the providers that need nothing.
 */
export async function prepareEmbedder(embedder: EmbeddingProvider): Promise<{ distilled: boolean; milliseconds: number; path: string } | undefined> {
  return embedder instanceof BuiltinFastEmbeddingProvider ? embedder.warmUp() : undefined;
}
