import type { Config } from '../../config.ts';
import { ExtractiveAnswerGenerator } from './extractive.ts';
import { OpenAiAnswerGenerator } from './openai.ts';
import type { AnswerGenerator } from './provider.ts';

export type GeneratorName = Config['llmProvider'];

/** The answer generators of a process, built on first use: experiences choose theirs by name. */
export function createAnswerGenerators(config: Config): (name?: GeneratorName) => AnswerGenerator {
  const built = new Map<GeneratorName, AnswerGenerator>();
  const build = (name: GeneratorName): AnswerGenerator =>
    name === 'openai'
      ? new OpenAiAnswerGenerator({
          baseUrl: config.openaiBaseUrl,
          apiKey: config.openaiApiKey,
          model: config.openaiChatModel,
          timeoutMs: config.llmTimeoutMs,
          maxRetries: config.llmMaxRetries,
        })
      : new ExtractiveAnswerGenerator();
  return (name = config.llmProvider) => {
    let generator = built.get(name);
    if (!generator) {
      generator = build(name);
      built.set(name, generator);
    }
    return generator;
  };
}
