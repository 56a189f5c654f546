/**
 * The load generator of bench/query.ts, run as a child process so that autocannon's own work
 * does not share the server's event loop (both still share the machine's two cores). Argument:
 * one JSON object {url, method, connections, seconds, body?}, where `body` says which questions
 * of bench/help-center.ts to send (each request the next one) and, for the query route, to which
 * experience (an anonymous first turn); without `experienceId` it is the embed-only route's body. Prints one JSON line:
 * requests/s, latency percentiles computed from every response's own time, and non-2xx counts.
 */
import autocannon from 'autocannon';
import { percentile, round } from './corpus.ts';
import { helpQuestions } from './help-center.ts';

type LoadSpec = {
  url: string;
  method: 'GET' | 'POST';
  connections: number;
  seconds: number;
  /** The questions: helpQuestions(count, articles, seed), from the `skip`th on (round). */
  body?: { experienceId?: string; articles: number; seed: number; count: number; skip: number };
};

const spec = JSON.parse(process.argv[2]!) as LoadSpec;
const questions = spec.body ? helpQuestions(spec.body.count, spec.body.articles, spec.body.seed) : [];
const latencies: number[] = [];
let next = 0;

const options: autocannon.Options = {
  url: spec.url,
  method: spec.method,
  connections: spec.connections,
  duration: spec.seconds,
  headers: spec.body ? { 'content-type': 'application/json' } : {},
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
console.log(
  JSON.stringify({
    requests: result.requests.total,
    requestsPerSecond: round(result.requests.total / (result.duration || spec.seconds)),
    latencyMs: { p50: round(percentile(latencies, 0.5), 2), p95: round(percentile(latencies, 0.95), 2), p99: round(percentile(latencies, 0.99), 2) },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }),
);
