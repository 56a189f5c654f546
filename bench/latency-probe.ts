/**
 * The client of bench/healthz-during-ingest.ts, run as a child process so that probing does not
 * share the server's event loop. Argument: one JSON object (ProbeSpec). `GET /healthz` goes out
 * every `healthzEveryMs` whether the previous one has answered or not (an open loop: a stall of
 * the server shows in every probe it holds up, not in one), while questions go one at a time to
 * `POST /api/v2/query`, each a different one of bench/help-center.ts. Prints one JSON object:
 * count, p50, p99 and max latency in ms of each, and how many did not answer 2xx within 10 s.
 */
import { percentile, round } from './corpus.ts';
import { helpQuestions } from './help-center.ts';

export type ProbeSpec = {
  base: string;
  seconds: number;
  healthzEveryMs: number;
  experienceId: string;
  /** Questions about the first `articles` articles, from the `skip`th on (each probe run asks new ones). */
  articles: number;
  skip: number;
};

export type ProbeFigures = { requests: number; p50: number; p99: number; max: number; failed: number };

function figures(latencies: number[], failed: number): ProbeFigures {
  return {
    requests: latencies.length,
    p50: round(percentile(latencies, 0.5)),
    p99: round(percentile(latencies, 0.99)),
    max: round(Math.max(0, ...latencies)),
    failed,
  };
}

/** A request without an answer by then is abandoned and counts as failed, with this latency (autocannon's default). */
const TIMEOUT_MS = 10_000;

async function timed(request: (signal: AbortSignal) => Promise<Response>): Promise<{ ms: number; ok: boolean }> {
  const started = performance.now();
  try {
    const response = await request(AbortSignal.timeout(TIMEOUT_MS));
    await response.arrayBuffer();
    return { ms: performance.now() - started, ok: response.ok };
  } catch {
    return { ms: performance.now() - started, ok: false };
  }
}

const spec = JSON.parse(process.argv[2]!) as ProbeSpec;
const deadline = performance.now() + spec.seconds * 1000;
const healthz = { latencies: [] as number[], failed: 0, inFlight: [] as Promise<void>[] };
const query = { latencies: [] as number[], failed: 0 };

const ticker = setInterval(() => {
  healthz.inFlight.push(
    timed((signal) => fetch(`${spec.base}/healthz`, { signal })).then(({ ms, ok }) => {
      healthz.latencies.push(ms);
      if (!ok) healthz.failed += 1;
    }),
  );
}, spec.healthzEveryMs);

const questions = helpQuestions(spec.skip + 10_000, spec.articles, 3).slice(spec.skip);
for (const text of questions) {
  if (performance.now() >= deadline) break;
  const { ms, ok } = await timed((signal) =>
    fetch(`${spec.base}/api/v2/query`, {
      signal,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ experienceId: spec.experienceId, text }),
    }),
  );
  query.latencies.push(ms);
  if (!ok) query.failed += 1;
}
clearInterval(ticker);
await Promise.all(healthz.inFlight);
console.log(JSON.stringify({ healthz: figures(healthz.latencies, healthz.failed), query: figures(query.latencies, query.failed) }));
