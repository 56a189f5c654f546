import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, describe, test } from 'node:test';
import { BuiltinEmbeddingProvider } from './builtin.ts';

const embedder = new BuiltinEmbeddingProvider({ threads: 2, batchSize: 16 });
after(() => embedder.close());

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let index = 0; index < a.length; index++) dot += a[index]! * b[index]!;
  return dot;
}

const sentences = [
  'Invoices are generated on the first business day of every month.',
  'The server failed to respond because the database connection pool was exhausted.',
  'You can export your data as a CSV file from the settings page.',
  'Refunds are accepted within thirty days of purchase with the original receipt.',
  'The API allows one hundred requests per minute for each client.',
  'Restart the application after changing the configuration file.',
];

/** A paragraph of about 660 characters made of the sentences above, different for each seed. */
function chunk(seed: number): string {
  let text = `Section ${seed}.`;
  for (let step = seed; text.length < 660; step = (step * 7 + 3) % 101) text += ` ${sentences[step % sentences.length]}`;
  return text.slice(0, 660);
}

describe('BuiltinEmbeddingProvider', () => {
  test('describes the Universal Sentence Encoder lite', () => {
    assert.equal(embedder.name, 'builtin');
    assert.equal(embedder.model, 'universal-sentence-encoder-lite');
    assert.equal(embedder.dimension, 512);
  });

  test('embeds sentences into normalized vectors where related sentences are closer', async () => {
    const [reset, forgot, weather] = await embedder.embed([
      'How do I reset my password?',
      'I forgot my password',
      'The weather in Paris is sunny',
    ]);
    for (const vector of [reset!, forgot!, weather!]) {
      assert.equal(vector.length, 512);
      assert.ok(Math.abs(cosine(vector, vector) - 1) < 1e-5, `squared norm ${cosine(vector, vector)}`);
    }
    const related = cosine(reset!, forgot!);
    const unrelated = cosine(reset!, weather!);
    assert.ok(related > 0.6, `related sentences: cosine ${related}`);
    assert.ok(unrelated < 0.3, `unrelated sentences: cosine ${unrelated}`);
  });

  test('gives the same text the same vector, within a call, across calls and in another batch', async () => {
    const text = 'Where can I download my invoices?';
    const [first, repeated] = await embedder.embed([text, text]);
    const [again] = await embedder.embed([text]);
    const inBatch = await embedder.embed([...Array.from({ length: 20 }, (_, seed) => chunk(seed)), text]);
    assert.deepEqual(repeated, first);
    assert.deepEqual(again, first);
    // Padded to the batch's longest text, the same computation may round differently in the last bits.
    assert.ok(cosine(inBatch[20]!, first!) > 0.99999, `cosine ${cosine(inBatch[20]!, first!)}`);
  });

  test('keeps the order of the texts it was given', async () => {
    const texts = Array.from({ length: 40 }, (_, seed) => (seed % 2 ? chunk(seed) : `${sentences[seed % sentences.length]} (${seed})`));
    const forward = await embedder.embed(texts);
    const backward = await embedder.embed([...texts].reverse());
    const [alone] = await embedder.embed([texts[7]!]);
    assert.equal(forward.length, 40);
    for (const [index, vector] of forward.entries()) {
      assert.ok(cosine(vector, backward[39 - index]!) > 0.9999, `text ${index} got another text's vector`);
      assert.ok(cosine(vector, forward[(index + 1) % 40]!) < 0.999, `texts ${index} and ${index + 1} got the same vector`);
    }
    assert.ok(cosine(forward[7]!, alone!) > 0.9999, 'a text embedded in a batch or alone gives the same vector');
  });

  test('embeds off the main thread: the event loop keeps ticking through a big batch', async () => {
    await embedder.warmUp();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    const vectors = await embedder.embed(Array.from({ length: 64 }, (_, seed) => chunk(seed + 100)));
    const elapsed = performance.now() - started;
    delay.disable();
    assert.equal(vectors.length, 64);
    const maxDelayMs = delay.max / 1e6;
    // 64 texts in batches of 16 on 2 threads: each thread embeds 2 batches one after the other.
    const batchMs = elapsed / 2;
    // Embedding on this thread would stall it for a whole batch (over 500 ms). On a quiet machine
    // the stalls stay under 100 ms; on a busy one (load average 18 on 2 cores, other test suites
    // running) every wait stretches, and so does a batch, hence the bound relative to a batch.
    const bound = Math.max(100, batchMs / 4);
    assert.ok(batchMs > 400, `a batch took ${batchMs} ms, too short to show anything`);
    assert.ok(maxDelayMs < bound, `the event loop stalled for ${maxDelayMs} ms while a batch took ${batchMs} ms`);
  });

  test('serves a question before the queued batches of a bulk call', async () => {
    const finished: string[] = [];
    const bulk = embedder.embed(Array.from({ length: 96 }, (_, seed) => chunk(seed + 300))).then(() => finished.push('bulk'));
    const query = embedder.embed(['How do I export my data?'], { question: true }).then(() => finished.push('query'));
    await Promise.all([bulk, query]);
    assert.deepEqual(finished, ['query', 'bulk']);
  });

  test('questions waiting together share batches and get the vectors they get alone', async () => {
    const questions = Array.from({ length: 24 }, (_, index) => `How do I export report number ${index} as CSV?`);
    const alone = [];
    for (const question of questions.slice(0, 3)) alone.push((await embedder.embed([question]))[0]!);
    // Keep both threads busy so that the questions wait, then ask them all at once.
    const bulk = embedder.embed(Array.from({ length: 32 }, (_, seed) => chunk(seed + 700)));
    const together = await Promise.all(questions.map(async (question) => (await embedder.embed([question], { question: true }))[0]!));
    await bulk;
    for (const [index, vector] of alone.entries()) assert.ok(cosine(vector, together[index]!) > 0.9999, `question ${index}`);
    assert.ok(new Set(together.map((vector) => vector.join())).size === questions.length, 'each question its own vector');
  });

  test('while questions come, a bulk call leaves a thread free for them', async () => {
    await embedder.warmUp();
    let started = performance.now();
    await embedder.embed(Array.from({ length: 16 }, (_, seed) => chunk(seed + 900)));
    const batchMs = performance.now() - started;
    const bulk = embedder.embed(Array.from({ length: 160 }, (_, seed) => chunk(seed + 1000)));
    // The first question waits for a thread to end its bulk batch; that thread is then kept for questions.
    await embedder.embed(['How do I export my data?'], { question: true });
    const waits: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      started = performance.now();
      await embedder.embed([`Where is invoice number ${index}?`], { question: true });
      waits.push(performance.now() - started);
    }
    // Without the free thread, each question waits for one of two bulk batches to end: 5 waits
    // add up to more than a batch. A question alone takes a hundredth of a batch (7 against 650 ms).
    const waited = waits.reduce((sum, wait) => sum + wait, 0);
    assert.ok(waited < batchMs / 2, `5 questions took ${waits.map(Math.round).join(', ')} ms while a bulk batch takes ${Math.round(batchMs)} ms`);
    assert.equal((await bulk).length, 160);
  });

  test('drops the pending batches of an aborted call and rejects with its reason', async () => {
    const controller = new AbortController();
    const pending = embedder.embed(Array.from({ length: 64 }, (_, seed) => chunk(seed + 500)), { signal: controller.signal });
    controller.abort(new Error('job cancelled'));
    await assert.rejects(pending, { message: 'job cancelled' });
    const [vector] = await embedder.embed(['still working']);
    assert.equal(vector!.length, 512);
  });

  test('close() terminates its threads so that the process can exit', () => {
    const script = `
      import { BuiltinEmbeddingProvider } from ${JSON.stringify(new URL('./builtin.ts', import.meta.url).href)};
      const embedder = new BuiltinEmbeddingProvider({ threads: 2 });
      const vectors = await embedder.embed(['one sentence', 'another sentence']);
      embedder.embed(Array.from({ length: 64 }, (_, index) => 'text number ' + index)).catch(() => {});
      await embedder.close();
      console.log('embedded', vectors.length);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      cwd: new URL('../../../..', import.meta.url),
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.signal, null, `the process did not exit by itself: ${child.stderr}`);
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), 'embedded 2');
  });
});
