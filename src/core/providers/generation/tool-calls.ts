/**
 * The tool calls of a chat-completions reply, put together: a stream sends each call in fragments
 * (`{index, id, type, function: {name, arguments}}`, the arguments cut anywhere), a whole JSON reply
 * sends them complete. Also the messages that carry the calls and their results back to the model.
 */
import type { ToolFunction } from './provider.ts';
import { isRecord } from '../../is-record.ts';

/** One complete call, as the assistant message that requested it repeats it to the model. */
export type ToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** The assistant's turn that asked for tools: no text (see openai.ts on why any is dropped). */
export type ToolCallsMessage = { role: 'assistant'; content: null; tool_calls: ToolCall[] };

/** A tool's result, answering the call with the same id. */
export type ToolResultMessage = { role: 'tool'; tool_call_id: string; content: string };

/** The `tools` field of a request: each function as the protocol wraps it. */
export function toolDefinitions(functions: ToolFunction[]): { type: 'function'; function: ToolFunction }[] {
  return functions.map(({ name, description, parameters }) => ({ type: 'function', function: { name, description, parameters } }));
}

/** Joins the fragments of a reply's calls by their index, in the order the calls were opened. */
export class ToolCallAccumulator {
  private readonly calls = new Map<number, ToolCall>();

  /** @param round The tool round (from 1), for the ids of calls a server sent without one. */
  constructor(private readonly round: number) {}

  /**
   * Adds a reply's `tool_calls` field: stream fragments, or the complete calls of a JSON reply
   * (which have no `index`: their position is it). Anything that is not an array adds nothing.
   */
  add(fragments: unknown): void {
    if (!Array.isArray(fragments)) return;
    for (const [position, fragment] of fragments.entries()) {
      if (!isRecord(fragment)) continue;
      const index = typeof fragment.index === 'number' ? fragment.index : position;
      let call = this.calls.get(index);
      if (!call) {
        // A server may send no id (Ollama's native API has none); the tool message must still name one.
        call = { id: `call_${this.round}_${index}`, type: 'function', function: { name: '', arguments: '' } };
        this.calls.set(index, call);
      }
      if (typeof fragment.id === 'string' && fragment.id) call.id = fragment.id;
      const fn = isRecord(fragment.function) ? fragment.function : {};
      // The name comes whole in the first fragment: a server that repeats it must not double it.
      if (typeof fn.name === 'string' && !call.function.name) call.function.name = fn.name;
      // Arguments as an object instead of its JSON text, as Ollama's native API sends them.
      if (typeof fn.arguments === 'string') call.function.arguments += fn.arguments;
      else if (isRecord(fn.arguments)) call.function.arguments += JSON.stringify(fn.arguments);
    }
  }

  /** How many calls have begun. */
  get size(): number {
    return this.calls.size;
  }

  /** The calls so far, by index. */
  list(): ToolCall[] {
    return [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  }
}

