/**
 * The load generator of the benchmarks, run as a child process so that autocannon's own work
 * does not share the server's event loop (both still share the machine's two cores). Argument:
 * a JSON array of loads {url, method, connections, seconds, headers?, body?}, run at the same time
 * (the mixed load of bench/query.ts runs queries and job reads together), where `body` says which
 * questions of bench/help-center.ts to send (each request the next one) and, for the query route,
 * to which experience (an anonymous first turn); without `experienceId` it is the embed-only
 * route's body. Prints a JSON array, one element per load: requests/s, latency percentiles
 * computed from every response's own time (and the p99 with each timeout counted as 10 s), 2xx,
 * non-2xx and 5xx counts, errors and timeouts (no response within autocannon's 10 s).
 */
import autocannon from 'autocannon';
import { percentile, round } from './corpus.ts';
import { helpQuestions } from './help-center.ts';

export type LoadSpec = {
  url: string;
  method: 'GET' | 'POST';
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
  /** The questions: helpQuestions(count, articles, seed), from the `skip`th on (round). */
  body?: { experienceId?: string; articles: number; seed: number; count: number; skip: number };
};

/** autocannon's default: a request without a response by then counts as a timeout. */
const TIMEOUT_MS = 10_000;

async function run(spec: LoadSpec) {
  const questions = spec.body ? helpQuestions(spec.body.count, spec.body.articles, spec.body.seed) : [];
  const latencies: number[] = [];
  let next = 0;
  const options: autocannon.Options = {
    url: spec.url,
    method: spec.method,
    connections: spec.connections,
    duration: spec.seconds,
    headers: { ...spec.headers, ...(spec.body ? { 'content-type': 'application/json' } : {}) },
    requests: [
      {
        setupRequest: (request) => {
          if (!spec.body) return request;
          const { experienceId } = spec.body;
          const text = questions[(spec.body.skip + next++) % questions.length]!;
          return { ...request, body: JSON.stringify(experienceId ? { experienceId, text } : { text }) };
        },
      },
    ],
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, outcome) => (error ? reject(error) : resolve(outcome)));
    // autocannon's histogram has no p95 and rounds to whole milliseconds; every response's own time does not.
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  const timedOut = Array<number>(result.timeouts).fill(TIMEOUT_MS);
  return {
    requests: result.requests.total,
    requestsPerSecond: round(result.requests.total / (result.duration || spec.seconds)),
    latencyMs: { p50: round(percentile(latencies, 0.5), 2), p95: round(percentile(latencies, 0.95), 2), p99: round(percentile(latencies, 0.99), 2) },
    // The percentiles above only see answers: with most requests timing out they would look fine.
    p99WithTimeoutsMs: round(percentile([...latencies, ...timedOut], 0.99), 2),
    answered: result['2xx'],
    non2xx: result.non2xx,
    // 503: no database connection within 5 s (the pool's wait, CONNECT_TIMEOUT_MS), among others.
    status5xx: result['5xx'],
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

const specs = JSON.parse(process.argv[2]!) as LoadSpec[];
console.log(JSON.stringify(await Promise.all(specs.map(run))));
