import type { Db, Queryable } from '../../../core/db/db.ts';
import { yieldEvery } from '../../../core/yield-every.ts';
import { termWeight } from './bm25.ts';
import type { Ranked } from '../retrieve-input.ts';

/**
 * A lexeme's postings in one knowledge base as the database held them when `keyword_lexemes`
 * summed its changes to `version` (migration 013): chunks as numbers of this cache's chunk table.
 */
type PostingList = {
  version: string;
  /** The numbering its chunks are numbers of. */
  numbering: Numbering;
  chunks: Int32Array;
  frequencies: Uint16Array;
  lengths: Uint16Array;
  /** Each posting's `keyword_term_weight` under `averageLength`, and the largest, computed when first needed. */
  weights?: TermWeights;
};

type TermWeights = { averageLength: number; values: Float64Array; largest: number };

/**
 * Chunk ids as the numbers the lists hold. Replaced whole when the cache is cleared, so that a list
 * read before keeps the numbering its chunks were given.
 */
type Numbering = { ids: string[]; numbers: Map<string, number> };

/** A (knowledge base, lexeme) a question needs, at the version and size the database reports. */
export type ListKey = { knowledgeBaseId: string; lexeme: string; version: string; postings: number };

/** Which list: a lexeme of a knowledge base. */
type ListName = Pick<ListKey, 'knowledgeBaseId' | 'lexeme'>;

/** Lists to read in one statement once the load before has ended (`PostingLists.enqueue`). */
type PendingLoad = { workspaceId: string; keys: ListKey[]; postings: number; begun: boolean; done: Promise<void> };

/** A lexeme's list with the idf it weighs with in this question. */
export type WeightedList = { list: PostingList; idf: number };

// Memory: 8 bytes a posting in typed arrays (16 once its weights are computed) and about 80 a
// chunk id (a 36-character string and its map entry). The 200 questions of bench:query over its
// 100,000-chunk help centre need 1.66 million postings (27 MB) and every chunk id (8 MB); 4 million
// postings (64 MB) and 500,000 chunk ids (40 MB) hold that twice over. A list is read in one reply,
// which the driver parses on the thread that serves HTTP before the decoding below can yield:
// 250,000 postings are 9 MB of ids and 4 MB of counts (about 15 ms of parsing, estimated from the
// 0.55 µs per posting that decoding takes). Larger lists stay in the database, which ranks their
// questions.
const DEFAULT_LIMITS = { postings: 4_000_000, chunkIds: 500_000, listPostings: 250_000 };
// A list is loaded again at most once a second: while a job writes a common lexeme, its version
// changes with every batch, and each load of a 26,000-posting list costs about 15 ms of database.
const RELOAD_INTERVAL_MS = 1000;
// How long a question waits for its lists to be read before the database ranks it instead. A
// process that starts under 50 questions at once at 100,000 chunks reads about 1.65 million
// postings for its first 300; those took 5.7-6.9 s with 2 s of wait, 4.0-4.2 s with 5 s, 10.4-11.1
// s without waiting, and with 1 s most questions gave up and were ranked by the database, which
// slowed the reads as much. Under the mixed load of bench:query (100 connections asking, 100
// reading jobs) the reads took up to 17 s, so 5 s and more left questions past 10 s in all
// (72-135 of 2,000); 2 s none (bench/history.md, "Questions wait for the lists they miss").
const LIST_WAIT_MS = 2000;
const UUID_LENGTH = 36;
// How far rounding to 9 decimals can move a score: chunks this close to the k-th best may still tie it.
const ROUNDING = 1e-8;
// Positions in a list, as `inChunkOrder` packs them beside chunk numbers: above the largest list kept.
const POSITIONS = 2 ** 18;
// A step of bisection costs about this many postings of a pass over a list.
const SEARCH_COST = 4;

/**
 * Posting lists of the lexemes questions ask for, kept in this process and checked against the
 * database's version of each list on every question, so a list is used only while it is exactly
 * the database's. Scoring a question from memory costs about a microsecond per 100 postings,
 * where `keyword_top_k` pays 2-4 µs per candidate chunk and lexeme in the executor.
 */
export class PostingLists {
  private readonly lists = new Map<string, PostingList>();
  private numbering: Numbering = { ids: [], numbers: new Map() };
  private readonly lastLoad = new Map<string, number>();
  private postings = 0;
  private scores = new Float64Array(1024);
  private seen = new Uint8Array(1024);
  private touched = new Int32Array(1024);
  private marks = new Uint8Array(1024);
  private loads: Promise<void> = Promise.resolve();
  /** The load that will bring each list being read or waiting to be, by name. */
  private readonly loading = new Map<string, Promise<void>>();
  /** The load not begun yet, which the lists questions miss meanwhile join. */
  private next: PendingLoad | undefined;
  /**
   * Questions answered from memory (`waited` of them after waiting for their lists) and those that
   * had to go to the database; the lists read; the postings of the lists `topK` summed whole, and
   * of those it only looked candidates up in.
   */
  readonly counts = { hits: 0, waited: 0, misses: 0, listsRead: 0, postingsSummed: 0, postingsScanned: 0 };

  private readonly limits: typeof DEFAULT_LIMITS;
  private readonly waitMs: number;

  constructor({ limits = DEFAULT_LIMITS, waitMs = LIST_WAIT_MS }: { limits?: typeof DEFAULT_LIMITS; waitMs?: number } = {}) {
    this.limits = limits;
    this.waitMs = waitMs;
    if (limits.listPostings > POSITIONS) throw new Error(`A list of more than ${POSITIONS} postings cannot be kept in chunk order.`);
  }

  /** What this process holds. */
  get held(): { lists: number; postings: number; chunkIds: number } {
    return { lists: this.lists.size, postings: this.postings, chunkIds: this.numbering.ids.length };
  }

  /**
   * The lists of every key at its version, or undefined when the database must rank the question.
   * The lists not held at their version are read (each at most once a second, none longer than a
   * list may be), and the question waits for them up to `waitMs` (0: not at all). A list missed
   * while another load runs joins the next one, so that a process that starts under many
   * questions reads each list once and its questions wait for those reads, instead of each being
   * ranked by the database (about 75 ms of its CPU at 100,000 chunks) while the reads queue
   * behind them (decision 175).
   */
  async find(db: Queryable, workspaceId: string, keys: ListKey[]): Promise<PostingList[] | undefined> {
    let found = this.atVersion(workspaceId, keys);
    if (!found) {
      const loaded = this.request(db, workspaceId, keys);
      if (loaded && this.waitMs > 0 && (await settlesWithin(loaded, this.waitMs))) found = this.atVersion(workspaceId, keys);
      if (found) this.counts.waited += 1;
    }
    if (found) this.counts.hits += 1;
    else this.counts.misses += 1;
    return found;
  }

  /** Resolves when no load is running or waiting to. */
  async settled(): Promise<void> {
    while (this.loading.size > 0) await Promise.all(new Set(this.loading.values()));
  }

  /** The lists of every key at its version (now the most recently used), or undefined. */
  private atVersion(workspaceId: string, keys: ListKey[]): PostingList[] | undefined {
    const found: PostingList[] = [];
    for (const key of keys) {
      const name = listName(workspaceId, key);
      const list = this.lists.get(name);
      if (!list || list.version !== key.version) return undefined;
      // Most recently used last: eviction takes the first.
      this.lists.delete(name);
      this.lists.set(name, list);
      found.push(list);
    }
    return found;
  }

  /**
   * Has the keys not held at their version read, and returns what settles once each has been read
   * (at the version it has then), or undefined when one of them will not be: it is longer than a
   * list may be, or was read less than a second ago and is not being read again.
   */
  private request(db: Queryable, workspaceId: string, keys: ListKey[]): Promise<unknown> | undefined {
    const now = Date.now();
    const reads = new Set<Promise<void>>();
    let readable = true;
    if (this.lastLoad.size > 100_000) this.lastLoad.clear();
    for (const key of keys) {
      const name = listName(workspaceId, key);
      if (this.lists.get(name)?.version === key.version) continue;
      const read = this.loading.get(name);
      if (read) reads.add(read);
      else if (key.postings > this.limits.listPostings || now - (this.lastLoad.get(name) ?? 0) < RELOAD_INTERVAL_MS) readable = false;
      else {
        this.lastLoad.set(name, now);
        reads.add(this.enqueue(db, workspaceId, key));
      }
    }
    return readable ? Promise.all(reads) : undefined;
  }

  /**
   * Adds a list to the next load, begun once the running one ends; a load reads one workspace's
   * lists, and at most a list's worth of postings, since the driver parses its whole reply on the
   * thread that serves HTTP (about 15 ms for 250,000 postings).
   */
  private enqueue(db: Queryable, workspaceId: string, key: ListKey): Promise<void> {
    let pending = this.next;
    if (!pending || pending.begun || pending.workspaceId !== workspaceId || pending.postings + key.postings > this.limits.listPostings) {
      const load: PendingLoad = { workspaceId, keys: [], postings: 0, begun: false, done: Promise.resolve() };
      // A failed load (the database gone, say) leaves the lists as they were; their questions go
      // on being ranked by the database, which reports its own failure.
      load.done = this.load(db, workspaceId, () => {
        load.begun = true;
        return load.keys;
      })
        .catch(() => undefined)
        .finally(() => {
          for (const read of load.keys) {
            const name = listName(workspaceId, read);
            if (this.loading.get(name) === load.done) this.loading.delete(name);
          }
          if (this.next === load) this.next = undefined;
        });
      this.next = pending = load;
    }
    pending.keys.push(key);
    pending.postings += key.postings;
    this.loading.set(listName(workspaceId, key), pending.done);
    return pending.done;
  }

  /**
   * Reads the lists of the keys with their versions in one statement (one snapshot, so each list
   * is the one its version counts) and keeps them, letting the event loop take a turn every 5 ms
   * while it decodes them (0.55 µs a posting: 14 ms for a list of 26,000).
   */
  async load(db: Queryable, workspaceId: string, keys: ListName[] | (() => ListName[])): Promise<void> {
    // One load at a time: a load may clear the chunk table that another one is numbering into.
    const run = this.loads.then(() => this.read(db, workspaceId, typeof keys === 'function' ? keys() : keys));
    this.loads = run.catch(() => undefined);
    return run;
  }

  private async read(db: Queryable, workspaceId: string, keys: ListName[]): Promise<void> {
    const { rows } = await db.query<{ knowledge_base_id: string; lexeme: string; version: string | null; ids: string | null; counts: Uint8Array | null }>(
      `SELECT k.id AS knowledge_base_id, k.lexeme, v.version, p.ids, p.counts
       FROM unnest($2::uuid[], $3::text[]) k(id, lexeme)
       CROSS JOIN LATERAL (
         SELECT sum(l.changes)::text AS version FROM keyword_lexemes l
         WHERE l.workspace_id = $1 AND l.knowledge_base_id = k.id AND l.lexeme = k.lexeme
       ) v
       CROSS JOIN LATERAL (
         SELECT string_agg(p.chunk_id::text, '') AS ids, string_agg(int4send(p.frequency) || int4send(p.chunk_length), ''::bytea) AS counts
         FROM keyword_postings p WHERE p.workspace_id = $1 AND p.knowledge_base_id = k.id AND p.lexeme = k.lexeme
       ) p`,
      [workspaceId, keys.map((key) => key.knowledgeBaseId), keys.map((key) => key.lexeme)],
    );
    this.counts.listsRead += rows.length;
    const slice = yieldEvery();
    for (const row of rows) {
      if (row.version === null) continue;
      const ids = row.ids ?? '';
      const size = ids.length / UUID_LENGTH;
      if (this.numbering.ids.length + size > this.limits.chunkIds) this.clear();
      if (size > this.limits.listPostings || this.numbering.ids.length + size > this.limits.chunkIds) continue;
      const counts = row.counts ?? new Uint8Array(0);
      const view = new DataView(counts.buffer, counts.byteOffset, counts.byteLength);
      const { numbering } = this;
      const list: PostingList = { version: row.version, numbering, chunks: new Int32Array(size), frequencies: new Uint16Array(size), lengths: new Uint16Array(size) };
      let fits = true;
      for (let index = 0; index < size; index += 1) {
        const frequency = view.getInt32(index * 8);
        const length = view.getInt32(index * 8 + 4);
        // A chunk is at most a few thousand tokens; one beyond 16 bits leaves its lists to the database.
        fits &&= length <= 0xffff;
        list.chunks[index] = chunkNumber(numbering, ids.slice(index * UUID_LENGTH, (index + 1) * UUID_LENGTH));
        list.frequencies[index] = frequency;
        list.lengths[index] = length;
        if (index % 1024 === 1023) await slice();
      }
      if (fits) this.keep(listName(workspaceId, { knowledgeBaseId: row.knowledge_base_id, lexeme: row.lexeme }), inChunkOrder(list));
    }
  }

  /**
   * The TypeScript ranker: the top k chunks by BM25 over the lists, as `keyword_top_k` ranks them:
   * per posting idf × `keyword_term_weight` (migration 007, here `termWeight`), summed per chunk,
   * rounded to 9 decimals the way PostgreSQL rounds a float8 through numeric, ties by chunk id.
   * Used for an unfiltered question whose lists `find` returned (`keywordSearch`, case 2), which is
   * most questions once a process has read the lists it is asked for; the SQL rankers take the
   * rest, and keyword-ranking.test.ts checks that both give every chunk the same score.
   *
   * MaxScore (Turtle and Flood 1995), as `keyword_top_k` prunes in SQL: lists are summed whole in
   * the order of their upper bound (idf × their largest weight), the rarest and heaviest first,
   * while the bounds of the lists left could still lift a chunk not seen yet past θ, the k-th
   * largest partial sum (a lower bound of the k-th best score). Once they cannot, the lists left
   * (a question's common words: most of its postings, least of its weight) only complete the
   * chunks seen whose partial sum plus those bounds reaches θ, each looked up in the list (kept in
   * chunk order) instead of every posting adding to a score in a table of every chunk, a cache
   * miss each (bench/history.md, "MaxScore over the posting lists in memory").
   */
  topK(weighted: WeightedList[], averageLength: number, k: number): Ranked {
    const ids = weighted[0]?.list.numbering.ids ?? [];
    this.reserve(ids.length);
    const { scores, seen, touched } = this;
    const lists = weighted
      .map(({ list, idf }) => {
        const weights = termWeights(list, averageLength);
        return { chunks: list.chunks, weights: weights.values, idf, bound: idf * weights.largest };
      })
      .sort((a, b) => b.bound - a.bound);
    // left[i]: the most the lists from i on can add to a chunk's score.
    const left = new Float64Array(lists.length + 1);
    for (let index = lists.length - 1; index >= 0; index -= 1) left[index] = left[index + 1]! + lists[index]!.bound;
    let count = 0;
    let theta = -Infinity;
    let summed = 0;
    for (; summed < lists.length; summed += 1) {
      if (count >= k && left[summed]! < theta - ROUNDING) break;
      const { chunks, weights, idf } = lists[summed]!;
      for (let index = 0; index < chunks.length; index += 1) {
        const chunk = chunks[index]!;
        if (seen[chunk] === 0) {
          seen[chunk] = 1;
          touched[count++] = chunk;
        }
        scores[chunk]! += idf * weights[index]!;
      }
      this.counts.postingsSummed += chunks.length;
      if (count >= k) theta = kthLargest(touched.subarray(0, count), scores, k);
    }
    let candidates = count;
    if (summed < lists.length) {
      // Only the chunks that can still reach θ are completed (moved to the front of `touched`),
      // list by list; after each list θ is taken again from their sums so far and those that can
      // no longer reach it are dropped. The others keep a partial sum, below any score of the top k.
      for (let rest = summed; rest < lists.length; rest += 1) {
        if (rest > summed) theta = Math.max(theta, kthLargest(touched.subarray(0, candidates), scores, k));
        let kept = 0;
        for (let index = 0; index < candidates; index += 1) {
          const chunk = touched[index]!;
          if (scores[chunk]! + left[rest]! < theta - ROUNDING) continue;
          touched[index] = touched[kept]!;
          touched[kept++] = chunk;
        }
        candidates = kept;
        const { chunks, weights, idf } = lists[rest]!;
        forEachHeld(chunks, touched.subarray(0, candidates), this.marks, (chunk, position) => (scores[chunk]! += idf * weights[position]!));
        this.counts.postingsScanned += chunks.length;
      }
    }
    // The k-th best score; rounding moves a score by less than 1e-8 here, so only chunks within
    // that of it can still tie or overtake once rounded.
    const floor = kthLargest(touched.subarray(0, candidates), scores, k) - ROUNDING;
    const ranked: Ranked = [];
    for (let index = 0; index < candidates; index += 1) {
      const chunk = touched[index]!;
      if (scores[chunk]! >= floor) ranked.push({ id: ids[chunk]!, score: roundLikePostgres(scores[chunk]!) });
    }
    for (let index = 0; index < count; index += 1) scores[touched[index]!] = seen[touched[index]!] = 0;
    return ranked.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, k);
  }

  /**
   * Each named chunk's sum of the idf of the lists that hold it (absent: none does): what the
   * keyword coverage of the chunks returned adds up, read from the lists the question was ranked
   * with instead of an index probe per chunk and lexeme in the database: the named chunks are
   * looked up in each list (`forEachHeld`). The lists are those of one `lookup`.
   */
  idfSums(weighted: WeightedList[], chunkIds: string[]): Map<string, number> {
    const sums = new Map<string, number>();
    const numbering = weighted[0]?.list.numbering;
    if (!numbering) return sums;
    this.reserve(numbering.ids.length);
    const { scores: found } = this;
    const named = Int32Array.from(new Set(chunkIds.flatMap((id) => numbering.numbers.get(id) ?? []))).sort();
    for (const { list, idf } of weighted) forEachHeld(list.chunks, named, this.marks, (chunk) => (found[chunk]! += idf));
    for (const number of named) {
      if (found[number]! > 0) sums.set(numbering.ids[number]!, found[number]!);
      found[number] = 0;
    }
    return sums;
  }

  /** Scratch arrays of at least `chunks` entries, zeroed. */
  private reserve(chunks: number): void {
    if (this.scores.length >= chunks) return;
    this.scores = new Float64Array(chunks * 2);
    this.seen = new Uint8Array(chunks * 2);
    this.touched = new Int32Array(chunks * 2);
    this.marks = new Uint8Array(chunks * 2);
  }

  private keep(name: string, list: PostingList): void {
    const previous = this.lists.get(name);
    if (previous) this.postings -= previous.chunks.length;
    this.lists.delete(name);
    this.lists.set(name, list);
    this.postings += list.chunks.length;
    for (const [oldest, evicted] of this.lists) {
      if (this.postings <= this.limits.postings) break;
      this.lists.delete(oldest);
      this.postings -= evicted.chunks.length;
    }
  }

  /** Forgets every list and chunk id: the chunk table only grows otherwise (deleted chunks stay in it). */
  private clear(): void {
    this.lists.clear();
    this.numbering = { ids: [], numbers: new Map() };
    this.postings = 0;
  }
}

function chunkNumber(numbering: Numbering, id: string): number {
  let number = numbering.numbers.get(id);
  if (number === undefined) {
    number = numbering.ids.push(id) - 1;
    numbering.numbers.set(id, number);
  }
  return number;
}

/**
 * The list with its postings in ascending chunk order, for `forEachHeld`. Each posting is sorted as
 * chunk × POSITIONS + position, exact in a double (chunk numbers stay below 2^19, positions below
 * 2^18), because a typed array sorts numbers natively: about 1 ms for a list of 26,000 postings.
 */
function inChunkOrder(list: PostingList): PostingList {
  const { chunks, frequencies, lengths } = list;
  const keys = new Float64Array(chunks.length);
  for (let position = 0; position < chunks.length; position += 1) keys[position] = chunks[position]! * POSITIONS + position;
  keys.sort();
  const sorted = { ...list, chunks: new Int32Array(chunks.length), frequencies: new Uint16Array(chunks.length), lengths: new Uint16Array(chunks.length) };
  for (let index = 0; index < keys.length; index += 1) {
    const position = keys[index]! % POSITIONS;
    sorted.chunks[index] = chunks[position]!;
    sorted.frequencies[index] = frequencies[position]!;
    sorted.lengths[index] = lengths[position]!;
  }
  return sorted;
}

/**
 * Calls `visit` with each of `candidates` (chunk numbers, distinct) that `chunks` (a list in chunk
 * order) holds, and its position there. Few candidates for the list's length are looked up by
 * bisection (the candidates are sorted for it, in place); more are found by one pass over the
 * list with the candidates marked in `marks` (zero outside this function), which reads the marks in
 * address order since the list is in chunk order.
 */
function forEachHeld(chunks: Int32Array, candidates: Int32Array, marks: Uint8Array, visit: (chunk: number, position: number) => void): void {
  if (candidates.length * Math.log2(chunks.length + 1) * SEARCH_COST < chunks.length) {
    candidates.sort();
    let low = 0;
    for (const chunk of candidates) {
      let high = chunks.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (chunks[middle]! < chunk) low = middle + 1;
        else high = middle;
      }
      if (low === chunks.length) return;
      if (chunks[low] === chunk) visit(chunk, low);
    }
    return;
  }
  for (const chunk of candidates) marks[chunk] = 1;
  for (let position = 0; position < chunks.length; position += 1) {
    if (marks[chunks[position]!] === 1) visit(chunks[position]!, position);
  }
  for (const chunk of candidates) marks[chunk] = 0;
}

function listName(workspaceId: string, key: ListName): string {
  return `${workspaceId}/${key.knowledgeBaseId}/${key.lexeme}`;
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `keyword_term_weight(frequency, length, averageLength)` (migration 007) of each posting, in the
 * same floating-point operations; kept with the list until the average length changes.
 */
function termWeights(list: PostingList, averageLength: number): TermWeights {
  if (list.weights?.averageLength === averageLength) return list.weights;
  const { frequencies, lengths } = list;
  const values = new Float64Array(frequencies.length);
  let largest = 0;
  for (let index = 0; index < values.length; index += 1) {
    values[index] = termWeight(frequencies[index]!, lengths[index]!, averageLength);
    largest = Math.max(largest, values[index]!);
  }
  list.weights = { averageLength, values, largest };
  return list.weights;
}

/** The k-th largest score of the chunks (the smallest when there are fewer than k), by a min-heap of k. */
function kthLargest(chunks: Int32Array, scores: Float64Array, k: number): number {
  if (chunks.length <= k) return chunks.reduce((least, chunk) => Math.min(least, scores[chunk]!), Infinity);
  const heap = Float64Array.from(chunks.subarray(0, k), (chunk) => scores[chunk]!).sort();
  // A sorted array is a min-heap; sift each larger value down from the root.
  for (let index = k; index < chunks.length; index += 1) {
    const value = scores[chunks[index]!]!;
    if (value <= heap[0]!) continue;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= k) break;
      const child = left + 1 < k && heap[left + 1]! < heap[left]! ? left + 1 : left;
      if (heap[child]! >= value) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = value;
  }
  return heap[0]!;
}

/**
 * `round(x::numeric, 9)::float8` as PostgreSQL computes it: the float8 becomes a numeric of 15
 * significant digits (DBL_DIG), which is rounded half away from zero to 9 decimals.
 */
export function roundLikePostgres(value: number): number {
  // Below 1,000 the 15 digits are within 5e-13 of the value (5e-4 of a unit of 1e-9) and the
  // product within 1e-4 of a unit, so far enough from a half both round to the same unit, and a
  // unit count over 1e9 is the double that "<units>e-9" reads: a tenth of the time of the digits.
  const scaled = value * 1e9;
  if (value > 0 && value < 1000 && Math.abs(scaled - Math.floor(scaled) - 0.5) > 0.01) return Math.round(scaled) / 1e9;
  const [mantissa, exponentText] = value.toExponential(14).split('e') as [string, string];
  const negative = mantissa.startsWith('-');
  const digits = BigInt(mantissa.replace(/[-.]/g, ''));
  // value = digits × 10^(exponent − 14); in units of 1e-9 that is digits × 10^(exponent − 5).
  const shift = Number(exponentText) - 5;
  let units: bigint;
  if (shift >= 0) units = digits * 10n ** BigInt(shift);
  else {
    const divisor = 10n ** BigInt(-shift);
    units = digits / divisor + (2n * (digits % divisor) >= divisor ? 1n : 0n);
  }
  return Number(`${negative ? '-' : ''}${units}e-9`);
}

const perDatabase = new WeakMap<Db, PostingLists>();

/** The posting lists this process keeps for a database. */
export function postingListsOf(db: Db): PostingLists {
  let lists = perDatabase.get(db);
  if (!lists) perDatabase.set(db, (lists = new PostingLists()));
  return lists;
}
