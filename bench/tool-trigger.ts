/**
 * When a question should trigger an experience's tool (issue 37): with the offline generator, a
 * question calls a tool when its similarity to one of the tool's examples
 * (`exampleSimilarity`, the highest cosine) reaches the encoder's `toolCosine`. This measures that
 * rule on public data, CLINC150 (bench/clinc.ts), and chooses the threshold:
 *
 * - each of the 150 intents is a tool whose examples are K utterances of `train` (K = 1, 5, 10,
 *   drawn with seed `--seed`; the K = 5 ones are the first five of the K = 10 ones);
 * - positives of a tool are its intent's `val` (tuning) or `test` (reporting) utterances;
 *   negatives are the out-of-scope utterances (`oos_val` / `oos_test`) and the other intents';
 * - per tool and threshold t: the true-trigger rate (its positives with similarity ≥ t) and the
 *   false-trigger rates on out-of-scope questions and on other intents' questions, averaged over
 *   the 150 tools (`falseTriggerOosP90`: the 90th percentile over tools);
 * - the threshold is the smallest t (a multiple of 0.01) whose out-of-scope false-trigger rate on
 *   `val` is at most 2 %, chosen for each K; the encoder's `toolCosine` is the K = 5 one
 *   (`testAtToolCosine` gives the other K's test figures at it);
 * - `threeTools`: `--experiences` (1,000) experiences of 3 distinct random tools: the share of
 *   their positives that trigger the right tool as the best of the three (`right`), a wrong one
 *   (`wrong`), of out-of-scope and other intents' questions that trigger any of the three, and
 *   `accuracy`, the mean of the three correct shares (each kind of question counting the same);
 * - `questionMs`: p50 / p95 of embedding one question (`embed([text], {question: true})`, one
 *   after the other), `similarityUsPerTool`: exampleSimilarity against one tool's 5 cached examples.
 *
 *   npm run bench:tool-trigger -- --clinc-file DIR/data/data_full.json [--encoders builtin-fast,builtin] [--seed 37]
 *
 * `--clinc-file` (or CLINC150_FILE) is data/data_full.json of a clone of github.com/clinc/oos-eval.
 * MODELS_DIR keeps builtin-fast's distilled table between runs. `--encoders openai` measures the
 * model the OPENAI_* variables name (about 8,600 requests, one a question). Prints one JSON line.
 */
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import { createEmbeddingProvider, prepareEmbedder } from '../src/core/providers/embeddings/create.ts';
import type { EmbeddingProvider } from '../src/core/providers/embeddings/provider.ts';
import { exampleSimilarity } from '../src/features/tools/example-similarity.ts';
import { clincFile, CLINC_SOURCE, readClinc, type Utterance } from './clinc.ts';
import { percentile, random, round, shuffled } from './corpus.ts';

const { values: options } = parseArgs({
  options: {
    'clinc-file': { type: 'string' },
    encoders: { type: 'string', default: 'builtin-fast,builtin' },
    // The number: any seed gives a fair draw, this one is the one the figures are for.
    seed: { type: 'string', default: '37' },
    experiences: { type: 'string', default: '1000' },
  },
});
const seed = Number(options.seed);
const experienceCount = Number(options.experiences);
if (!Number.isInteger(seed) || !Number.isInteger(experienceCount) || experienceCount < 1) throw new Error('--seed and --experiences are whole numbers.');
const encoders = options.encoders.split(',');
const ENCODERS = ['builtin-fast', 'builtin', 'openai'] as const;
type Encoder = (typeof ENCODERS)[number];
if (!encoders.every((name) => (ENCODERS as readonly string[]).includes(name))) throw new Error(`--encoders lists some of ${ENCODERS.join(', ')}.`);

// K = 5 is the fewest examples a careful operator writes; 1 and 10 show how the rule moves with K.
const EXAMPLE_COUNTS = [1, 5, 10] as const;
const TOOL_COSINE_EXAMPLES = 5;
// A wrong API call is worse than a knowledge-base answer: at most 1 out-of-scope question in 50
// may trigger a given tool (before the required-parameter check, which cuts that further).
const MAX_FALSE_TRIGGER_OOS = 0.02;
const THRESHOLDS = Array.from({ length: 101 }, (_, index) => index / 100);
const OOS = -1;

const clinc = await readClinc(clincFile(options['clinc-file']));
const intents = [...new Set(clinc.train.map((utterance) => utterance.intent))].sort();
const next = random(seed);
const examplesOf = intents.map((intent) =>
  shuffled(
    clinc.train.filter((utterance) => utterance.intent === intent).map((utterance) => utterance.text),
    next,
  ).slice(0, Math.max(...EXAMPLE_COUNTS)),
);
const toolIndex = new Map(intents.map((intent, index) => [intent, index]));

/** One split's questions: their texts and the index of their intent (OOS for out-of-scope). */
type Questions = { texts: string[]; labels: Int32Array };

function questionsOf(inScope: Utterance[], outOfScope: Utterance[]): Questions {
  const all = [...inScope, ...outOfScope];
  return { texts: all.map((utterance) => utterance.text), labels: Int32Array.from(all, (utterance) => toolIndex.get(utterance.intent) ?? OOS) };
}
const splits = { val: questionsOf(clinc.val, clinc.oos_val), test: questionsOf(clinc.test, clinc.oos_test) };

type Rates = { trueTrigger: number; falseTriggerOos: number; falseTriggerOther: number; falseTriggerOosP90: number };

/** Per-tool rates at threshold `t`, averaged over tools; `similarity[q * tools + j]` is question q's to tool j. */
function ratesAt(similarity: Float64Array, questions: Questions, t: number): Rates {
  const tools = intents.length;
  const perTool = { positive: [] as number[], oos: [] as number[], other: [] as number[] };
  for (let tool = 0; tool < tools; tool++) {
    const hits = { positive: 0, oos: 0, other: 0 };
    const totals = { positive: 0, oos: 0, other: 0 };
    questions.labels.forEach((label, question) => {
      const kind = label === tool ? 'positive' : label === OOS ? 'oos' : 'other';
      totals[kind]++;
      if (similarity[question * tools + tool]! >= t) hits[kind]++;
    });
    for (const kind of ['positive', 'oos', 'other'] as const) perTool[kind].push(hits[kind] / totals[kind]);
  }
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    trueTrigger: round(mean(perTool.positive), 4),
    falseTriggerOos: round(mean(perTool.oos), 4),
    falseTriggerOther: round(mean(perTool.other), 4),
    falseTriggerOosP90: round(percentile(perTool.oos, 0.9), 4),
  };
}

/** The `threeTools` figures: experiences of 3 distinct tools drawn with `draw`, at threshold `t`. */
function threeTools(similarity: Float64Array, questions: Questions, t: number, draw: () => number) {
  const tools = intents.length;
  const counts = { right: 0, wrong: 0, positives: 0, oosTriggered: 0, oos: 0, otherTriggered: 0, other: 0 };
  for (let experience = 0; experience < experienceCount; experience++) {
    const chosen = shuffled(intents.map((_, tool) => tool), draw).slice(0, 3);
    questions.labels.forEach((label, question) => {
      const row = question * tools;
      const best = chosen.reduce((top, tool) => (similarity[row + tool]! > similarity[row + top]! ? tool : top));
      const triggered = similarity[row + best]! >= t;
      if (chosen.includes(label)) {
        counts.positives++;
        if (triggered) counts[best === label ? 'right' : 'wrong']++;
      } else if (label === OOS) {
        counts.oos++;
        if (triggered) counts.oosTriggered++;
      } else {
        counts.other++;
        if (triggered) counts.otherTriggered++;
      }
    });
  }
  const right = counts.right / counts.positives;
  const falseTriggerOos = counts.oosTriggered / counts.oos;
  const falseTriggerOther = counts.otherTriggered / counts.other;
  return {
    right: round(right, 4),
    wrong: round(counts.wrong / counts.positives, 4),
    falseTriggerOos: round(falseTriggerOos, 4),
    falseTriggerOther: round(falseTriggerOther, 4),
    accuracy: round((right + (1 - falseTriggerOos) + (1 - falseTriggerOther)) / 3, 4),
  };
}

/** Every question's similarity to every tool, for each K, with the time each question took to embed. */
async function similarities(embedder: EmbeddingProvider, questions: Questions, embedMs: number[], similarityMs: number[]) {
  const tools = intents.length;
  const matrices = new Map(EXAMPLE_COUNTS.map((count) => [count, new Float64Array(questions.texts.length * tools)]));
  for (const [question, text] of questions.texts.entries()) {
    let started = performance.now();
    const [vector] = await embedder.embed([text], { question: true });
    embedMs.push(performance.now() - started);
    for (const [count, matrix] of matrices) {
      started = performance.now();
      for (let tool = 0; tool < tools; tool++) matrix[question * tools + tool] = await exampleSimilarity(embedder, vector!, examplesOf[tool]!.slice(0, count));
      if (count === TOOL_COSINE_EXAMPLES) similarityMs.push((performance.now() - started) / tools);
    }
  }
  return matrices;
}

async function measure(name: Encoder) {
  const embedder = createEmbeddingProvider({ ...loadConfig(), embeddingsProvider: name });
  await prepareEmbedder(embedder);
  // Embeds (and caches) every tool's examples before the clock starts: an experience's examples
  // are embedded once, not on each question.
  const [probe] = await embedder.embed(['warm up'], { question: true });
  for (const examples of examplesOf) await exampleSimilarity(embedder, probe!, examples);
  const embedMs: number[] = [];
  const similarityMs: number[] = [];
  const val = await similarities(embedder, splits.val, embedMs, similarityMs);
  const test = await similarities(embedder, splits.test, embedMs, similarityMs);
  await embedder.close();

  const draw = random(seed + 1);
  const perCount = EXAMPLE_COUNTS.map((count) => {
    const chosen = THRESHOLDS.find((t) => ratesAt(val.get(count)!, splits.val, t).falseTriggerOos <= MAX_FALSE_TRIGGER_OOS) ?? 1;
    return {
      count,
      threshold: chosen,
      val: ratesAt(val.get(count)!, splits.val, chosen),
      test: ratesAt(test.get(count)!, splits.test, chosen),
      threeTools: threeTools(test.get(count)!, splits.test, chosen, draw),
    };
  });
  const toolCosine = perCount.find((figures) => figures.count === TOOL_COSINE_EXAMPLES)!.threshold;
  return {
    toolCosine,
    examples: Object.fromEntries(perCount.map(({ count, ...figures }) => [count, figures])),
    testAtToolCosine: Object.fromEntries(
      perCount.filter(({ count }) => count !== TOOL_COSINE_EXAMPLES).map(({ count }) => [count, ratesAt(test.get(count)!, splits.test, toolCosine)]),
    ),
    questionMs: { p50: round(percentile(embedMs, 0.5), 2), p95: round(percentile(embedMs, 0.95), 2) },
    similarityUsPerTool: round(percentile(similarityMs, 0.5) * 1000, 1),
  };
}

const started = performance.now();
const results: Record<string, Awaited<ReturnType<typeof measure>>> = {};
for (const name of encoders as Encoder[]) results[name] = await measure(name);
console.log(
  JSON.stringify({
    data: CLINC_SOURCE,
    file: basename(clincFile(options['clinc-file'])),
    seed,
    tools: intents.length,
    questions: { val: splits.val.texts.length, test: splits.test.texts.length },
    maxFalseTriggerOos: MAX_FALSE_TRIGGER_OOS,
    encoders: results,
    seconds: round((performance.now() - started) / 1000),
  }),
);
