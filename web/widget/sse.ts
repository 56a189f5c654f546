/** One Server-Sent Event: its `event:` name (default `message`) and its `data:` lines joined. */
export type SseEvent = { event: string; data: string };

/**
 * An incremental Server-Sent Events parser (the WHATWG event-stream format) for a body read with
 * fetch: EventSource cannot send a POST body. Chunks may split lines anywhere, even between the
 * `\r` and `\n` of a line end.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  /** Feeds decoded text; returns the events completed by it. */
  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    const lineEnd = /\r\n|\n|\r/g;
    let start = 0;
    let match: RegExpExecArray | null;
    while ((match = lineEnd.exec(this.buffer)) !== null) {
      // A lone `\r` at the end may be the first half of `\r\n`: wait for the next chunk.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break;
      const event = this.line(this.buffer.slice(start, match.index));
      if (event) events.push(event);
      start = lineEnd.lastIndex;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** The body ended: a lone `\r` held back at the end was a line end after all. */
  end(): SseEvent[] {
    return this.buffer.endsWith('\r') ? this.push('\n') : [];
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      const event = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n') } : undefined;
      this.event = '';
      this.data = [];
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return undefined;
  }
}
