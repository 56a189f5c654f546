import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BuiltinFastEmbeddingProvider } from './builtin-fast.ts';
import { pieceText } from './static-table.ts';

// The vocabulary is ordered by frequency, so its first 1,500 pieces cover the common words of the
// sentences below and distil in seconds instead of the minute the full 8,000 take; removing 16
// directions instead of 128 saves most of the rest.
const TOKENS = 1500;
const COMPONENTS = 16;

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let index = 0; index < a.length; index++) dot += a[index]! * b[index]!;
  return dot;
}

describe('BuiltinFastEmbeddingProvider', () => {
  let dataDir: string;
  let embedder: BuiltinFastEmbeddingProvider;
  let firstStart: Awaited<ReturnType<BuiltinFastEmbeddingProvider['warmUp']>>;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lore-builtin-fast-'));
    embedder = new BuiltinFastEmbeddingProvider({ modelsDir: join(dataDir, 'models'), tokens: TOKENS, components: COMPONENTS, threads: 1 });
    firstStart = await embedder.warmUp();
  });
  after(async () => {
    await embedder.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('describes itself as the static version of the builtin encoder', () => {
    assert.equal(embedder.name, 'builtin-fast');
    assert.equal(embedder.model, 'universal-sentence-encoder-lite-static');
    assert.equal(embedder.dimension, 512);
  });

  test('distils the table at the first start into DATA_DIR/models and reads it back at the next', async () => {
    assert.equal(firstStart.distilled, true);
    assert.match(firstStart.path, /\/models\/use-lite-static-[0-9a-f]{16}\.f32$/);
    assert.deepEqual(await readdir(join(dataDir, 'models')), [firstStart.path.split('/').at(-1)]);
    const written = await stat(firstStart.path);
    assert.equal(written.size, 8000 * 512 * 4);

    const secondStart = new BuiltinFastEmbeddingProvider({ modelsDir: join(dataDir, 'models'), tokens: TOKENS, components: COMPONENTS, threads: 1 });
    try {
      const reused = await secondStart.warmUp();
      assert.equal(reused.distilled, false);
      assert.equal(reused.path, firstStart.path);
      assert.equal((await stat(firstStart.path)).mtimeMs, written.mtimeMs);
      const text = 'Refunds are issued within ten days.';
      const [mine] = await embedder.embed([text]);
      const [theirs] = await secondStart.embed([text]);
      assert.deepEqual(theirs, mine);
    } finally {
      await secondStart.close();
    }
  });

  test('embeds texts into normalized 512-value vectors, identical texts into identical vectors', async () => {
    const texts = ['How do I reset my password?', 'A short text.', 'How do I reset my password?', ''];
    const vectors = await embedder.embed(texts);
    assert.equal(vectors.length, 4);
    for (const vector of vectors.slice(0, 3)) {
      assert.equal(vector.length, 512);
      assert.ok(Math.abs(cosine(vector, vector) - 1) < 1e-5);
    }
    assert.deepEqual(vectors[2], vectors[0]);
    // The empty text has no tokens: a zero vector, which matches nothing.
    assert.deepEqual(vectors[3], new Float32Array(512));
  });

  test('puts related sentences closer than unrelated ones', async () => {
    const [password, login, weather, rain] = await embedder.embed([
      'I forgot my password and cannot sign in to my account.',
      'How can I change the password of my account?',
      'It will rain all day tomorrow, so take an umbrella.',
      'The weather will be cold and wet this week.',
    ]);
    assert.ok(cosine(password!, login!) > cosine(password!, weather!));
    assert.ok(cosine(password!, login!) > cosine(password!, rain!));
    assert.ok(cosine(weather!, rain!) > cosine(weather!, login!));
  });

  test('reads a text past the 128 tokens the encoder sees', async () => {
    const opening = 'The meeting is on Monday. '.repeat(30);
    const [short, long] = await embedder.embed([opening, `${opening}${'Payment of the invoice is late. '.repeat(10)}`]);
    assert.ok(cosine(short!, long!) < 0.99);
  });

  test('stops a call whose signal aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await assert.rejects(embedder.embed(['one', 'two'], { signal: controller.signal }), /stop/);
  });

  test('embeds a piece as its text without the word-start mark', () => {
    assert.equal(pieceText('▁protein'), 'protein');
    assert.equal(pieceText('ing'), 'ing');
    assert.equal(pieceText('▁'), '');
  });
});
