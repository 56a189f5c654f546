/**
 * A fuzz campaign against one running server: the request arbitrary built from the server's own
 * `/openapi.json` (plus its hidden routes), and `attempt`, which sends one generated request and
 * judges the answer. Shared by test/fuzz.test.ts (bounded, stops at the first failure) and
 * bench/fuzz.ts (long, counts failures).
 */
import type fc from 'fast-check';
import type { TestServer } from '../harness.ts';
import { describeExchange, failureClass, judge, type Problem } from './check.ts';
import { fuzzLimits } from './fixture.ts';
import { hiddenOperations, operationsOf, type Operation } from './operations.ts';
import { fuzzRequests, type FuzzRequest } from './requests.ts';
import { materialize, send, type Exchange, type FuzzFixture, type RawRequest } from './wire.ts';

/** One request sent: what went out, what came back, and what is wrong with it. */
export type Attempt = { request: FuzzRequest; raw: RawRequest; exchange: Exchange; problems: Problem[] };

/** A request arbitrary and the means to try its values on one server. */
export type Campaign = {
  operations: Operation[];
  requests: fc.Arbitrary<FuzzRequest>;
  attempt(request: FuzzRequest): Promise<Attempt>;
};

/** Reads the server's OpenAPI document and prepares requests aimed at `fixture`. */
export async function startCampaign(server: TestServer, fixture: FuzzFixture): Promise<Campaign> {
  const document = await server.request('GET', '/openapi.json');
  if (document.status !== 200) throw new Error(`/openapi.json answered ${document.status}`);
  const documented = operationsOf(document.body);
  const operations = [...documented, ...hiddenOperations(documented)];
  const { host, port } = new URL(server.url);
  return {
    operations,
    requests: fuzzRequests(operations, { limits: fuzzLimits, operations }),
    async attempt(request) {
      const raw = materialize(request, fixture, host);
      const exchange = await send(Number(port), raw);
      return { request, raw, exchange, problems: judge(request, raw, exchange) };
    },
  };
}

/** A failed attempt as text: each problem, then the request and the answer. */
export function describeAttempt(attempt: Attempt): string {
  const problems = attempt.problems.map((problem) => `[${problem.kind}] ${problem.message}`).join('\n');
  return `${problems}\n${describeExchange(attempt.request, attempt.raw, attempt.exchange)}`;
}

/** The failure classes of an attempt (see `failureClass`). */
export function attemptClasses(attempt: Attempt): string[] {
  return attempt.problems.map((problem) => failureClass(attempt.request, attempt.exchange, problem));
}
