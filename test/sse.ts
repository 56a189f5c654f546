import { SseParser } from '../web/widget/sse.ts';

/** The events of a whole Server-Sent Events body, in order, with their JSON data (the widget's parser). */
export function parseEvents(text: string): { event: string; data: any }[] {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.end()].map(({ event, data }) => ({ event, data: JSON.parse(data) }));
}
