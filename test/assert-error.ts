/** Assertions on the spec's error body `{statusCode, error, message, timestamp, path}`. */
import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import type { Answer } from './test-server.ts';

/**
 * The status, the body's status code and name, its path (without `/api`), an ISO timestamp and a
 * message; and, for a 400, that `errors` names each of `pointers`. Returns the message.
 */
export function assertError(answer: Answer, status: number, path: string, pointers: string[] = []): string {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.body.statusCode, status);
  assert.equal(answer.body.error, STATUS_CODES[status]);
  assert.equal(answer.body.path, path);
  assert.equal(new Date(answer.body.timestamp).toISOString(), answer.body.timestamp);
  assert.equal(typeof answer.body.message, 'string');
  const reported = (answer.body.errors ?? []).map((error: { path: string }) => error.path);
  for (const pointer of pointers) assert.ok(reported.includes(pointer), `${pointer} in ${JSON.stringify(answer.body.errors)}`);
  return answer.body.message;
}

/** Like `assertError`, and the body has exactly the spec's fields plus `extra` (errors, required, missing). */
export function assertExactError(answer: Answer, status: number, path: string, extra: Record<string, unknown> = {}): string {
  const message = assertError(answer, status, path);
  const { message: _message, timestamp: _timestamp, ...rest } = answer.body;
  assert.deepEqual(rest, { statusCode: status, error: STATUS_CODES[status], path, ...extra });
  return message;
}
