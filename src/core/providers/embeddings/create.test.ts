import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../config.ts';
import { createEmbeddingProvider } from './create.ts';

// The thresholds bench:tool-trigger chose (builtin ones) or the documented guess (openai).
const measured = { 'builtin-fast': 0.29, builtin: 0.5, openai: 0.5 } as const;

for (const [provider, toolCosine] of Object.entries(measured)) {
  test(`${provider}: toolCosine is the encoder's own, and TOOLS_MATCH_COSINE replaces it`, async () => {
    const environment = { EMBEDDINGS_PROVIDER: provider, OPENAI_API_KEY: 'test-key' };
    const ownThreshold = createEmbeddingProvider(loadConfig(environment, false));
    const overridden = createEmbeddingProvider(loadConfig({ ...environment, TOOLS_MATCH_COSINE: '0.6' }, false));
    assert.equal(ownThreshold.toolCosine, toolCosine);
    assert.equal(overridden.toolCosine, 0.6);
    await Promise.all([ownThreshold.close(), overridden.close()]);
  });
}
