/**
 * The index at the top of docs/decisions.md: code and docs cite decisions by number, so every
 * decision must be findable there once, with a status that is `current`, `replaced by N` or
 * `partly replaced by N`, and every N a later decision. A fully replaced decision keeps a one-line
 * stub in docs/decisions.md and its text in docs/history/decisions.md.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

const decisionsText = readFileSync(new URL('../docs/decisions.md', import.meta.url), 'utf8');
const historyText = readFileSync(new URL('../docs/history/decisions.md', import.meta.url), 'utf8');

const DECISION = /^(\d+)\. (.*)$/gm;
const STUB = /^Replaced by ([\d, ]+): .+\. Text in docs\/history\/decisions\.md\.$/;
const INDEX_ROW = /^\| (\d+) \| (.+) \| (.+) \|$/gm;
const STATUS = /^(?:current|(partly )?replaced by (\d+(?:, \d+)*))$/;

const numbers = (list: string) => list.split(', ').map(Number);

/** What is wrong with the index of `decisions` (docs/decisions.md) and `history` (docs/history/decisions.md); empty when nothing. */
function indexProblems(decisions: string, history: string): string[] {
  const problems: string[] = [];
  const stubs = new Map<number, number[]>();
  const seen = new Set<number>();
  for (const [, number, rest] of decisions.matchAll(DECISION)) {
    const n = Number(number);
    if (seen.has(n)) problems.push(`decision ${n} appears twice`);
    seen.add(n);
    const stub = STUB.exec(rest!);
    if (stub) stubs.set(n, numbers(stub[1]!));
  }

  const listed = new Map<number, string>();
  for (const [, number, , status] of decisions.matchAll(INDEX_ROW)) {
    const n = Number(number);
    if (listed.has(n)) problems.push(`decision ${n} is in the index twice`);
    listed.set(n, status!);
    if (!seen.has(n)) problems.push(`the index lists decision ${n}, which does not exist`);
    const parsed = STATUS.exec(status!);
    if (!parsed) {
      problems.push(`decision ${n} has the status "${status}", not current, replaced by N or partly replaced by N`);
      continue;
    }
    const by = parsed[2] === undefined ? [] : numbers(parsed[2]);
    for (const m of by) {
      if (!seen.has(m)) problems.push(`decision ${n} is replaced by ${m}, which does not exist`);
      else if (m <= n) problems.push(`decision ${n} is replaced by ${m}, which is not a later decision`);
    }
    const fully = by.length > 0 && parsed[1] === undefined;
    if (fully && stubs.get(n)?.join() !== by.join()) problems.push(`decision ${n} is replaced by ${by.join(', ')}: its text should be a stub naming the same`);
    if (!fully && stubs.has(n)) problems.push(`decision ${n} is a stub, but the index says ${status}`);
  }
  for (const n of seen) if (!listed.has(n)) problems.push(`decision ${n} is not in the index`);

  const kept = new Set([...history.matchAll(/^(\d+)\. \*\*/gm)].map(([, number]) => Number(number)));
  for (const n of stubs.keys()) if (!kept.has(n)) problems.push(`decision ${n} is a stub, but its text is not in docs/history/decisions.md`);
  for (const n of kept) if (!stubs.has(n)) problems.push(`docs/history/decisions.md holds decision ${n}, which is not a stub in docs/decisions.md`);
  return problems;
}

describe('the index of docs/decisions.md', () => {
  test('lists every decision once, and every replacement names a later decision', () => {
    assert.deepEqual(indexProblems(decisionsText, historyText), []);
  });

  test('a decision missing from the index is found', () => {
    const without = decisionsText.replace(/^\| 7 \| .*\n/m, '');
    assert.notEqual(without, decisionsText);
    assert.deepEqual(indexProblems(without, historyText), ['decision 7 is not in the index']);
  });

  test('a decision listed twice, or a row for no decision, is found', () => {
    const twice = decisionsText.replace(/^(\| 7 \| .*\n)/m, '$1$1| 9999 | Nothing | current |\n');
    assert.deepEqual(indexProblems(twice, historyText), ['decision 7 is in the index twice', 'the index lists decision 9999, which does not exist']);
  });

  test('a replacement by a decision that does not exist, or an earlier one, is found', () => {
    const wrong = decisionsText.replace(/^(\| 24 \| .* \| )partly replaced by 198 \|$/m, '$1partly replaced by 9999 |').replace(/^(\| 37 \| .* \| )partly replaced by 88 \|$/m, '$1partly replaced by 3 |');
    assert.deepEqual(indexProblems(wrong, historyText), ['decision 24 is replaced by 9999, which does not exist', 'decision 37 is replaced by 3, which is not a later decision']);
  });

  test('a replaced decision must be a stub whose text is in the history', () => {
    const stubless = decisionsText.replace(/^(\| 10 \| .* \| )current \|$/m, '$1replaced by 86 |');
    assert.deepEqual(indexProblems(stubless, historyText), ['decision 10 is replaced by 86: its text should be a stub naming the same']);
    const lost = historyText.replace(/^51\. \*\*/m, 'Fifty-one. **');
    assert.deepEqual(indexProblems(decisionsText, lost), ['decision 51 is a stub, but its text is not in docs/history/decisions.md']);
  });
});
