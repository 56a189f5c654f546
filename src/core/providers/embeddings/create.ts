import type { Config } from '../../config.ts';
import { BuiltinFastEmbeddingProvider } from './builtin-fast.ts';
import { BuiltinEmbeddingProvider } from './builtin.ts';
import { OpenAiEmbeddingProvider } from './openai.ts';
import type { EmbeddingProvider } from './provider.ts';

/** The embedding provider `EMBEDDINGS_PROVIDER` names, configured from the environment. */
export function createEmbeddingProvider(config: Config): EmbeddingProvider {
  switch (config.embeddingsProvider) {
    case 'builtin':
      return new BuiltinEmbeddingProvider({ threads: config.embeddingsThreads, batchSize: config.embeddingsBatchSize });
    case 'builtin-fast':
      return new BuiltinFastEmbeddingProvider({ dataDir: config.dataDir, threads: config.embeddingsThreads });
    case 'openai':
      return new OpenAiEmbeddingProvider({
        baseUrl: config.openaiBaseUrl,
        apiKey: config.openaiApiKey,
        model: config.openaiEmbeddingsModel,
        dimensions: config.openaiEmbeddingsDimensions,
        batchSize: config.embeddingsBatchSize,
        timeoutMs: config.embeddingsTimeoutMs,
        maxRetries: config.embeddingsMaxRetries,
      });
  }
}
