/** The widget's Server-Sent Events parser, fed the way fetch delivers a body: in arbitrary chunks. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SseParser, type SseEvent } from './sse.ts';

const stream = 'event: meta\ndata: {"queryId":"q"}\n\nevent: delta\ndata: {"text":"Hel"}\n\n: a comment\nevent: delta\ndata: {"text":"lo"}\n\n';
const expected: SseEvent[] = [
  { event: 'meta', data: '{"queryId":"q"}' },
  { event: 'delta', data: '{"text":"Hel"}' },
  { event: 'delta', data: '{"text":"lo"}' },
];

/** Feeds the chunks one by one, then ends the body, and collects every event. */
function parse(chunks: string[]): SseEvent[] {
  const parser = new SseParser();
  return [...chunks.flatMap((chunk) => parser.push(chunk)), ...parser.end()];
}

describe('SseParser', () => {
  const cases: { name: string; chunks: string[]; events: SseEvent[] }[] = [
    { name: 'one chunk', chunks: [stream], events: expected },
    { name: 'one character at a time', chunks: [...stream], events: expected },
    { name: 'CRLF line ends split between \\r and \\n', chunks: stream.replaceAll('\n', '\r\n').split(/(?<=\r)/), events: expected },
    { name: 'CR line ends', chunks: [stream.replaceAll('\n', '\r')], events: expected },
    { name: 'several data lines are joined with newlines', chunks: ['data: a\ndata:b\n\n'], events: [{ event: 'message', data: 'a\nb' }] },
    { name: 'an event without data is not dispatched', chunks: ['event: ping\n\n'], events: [] },
    { name: 'an event not yet ended by a blank line waits', chunks: ['event: done\ndata: {}\n'], events: [] },
  ];
  for (const { name, chunks, events } of cases) {
    test(name, () => assert.deepEqual(parse(chunks), events));
  }
});
