import type { GenerationTools } from '../../core/providers/generation/provider.ts';
import type { TargetAgents } from '../webhooks/send-webhook.ts';
import { callTool, type ToolResponse } from './call-tool.ts';
import { argumentProblems } from './tool-parameters.ts';
import type { Tool, ToolCall } from './tool.schema.ts';
import { isRecord } from '../../core/is-record.ts';

// What a model is told of a response: the issue's 16 KB, enough for a record and a short list.
export const MAX_TOOL_MESSAGE_CHARS = 16 * 1024;


/** The `tool` message of a successful call: the JSON compacted when it parsed, cut to the limit. */
function toolMessage(response: ToolResponse): string {
  const text = response.json === undefined ? (response.text ?? '') : JSON.stringify(response.json);
  return text.length <= MAX_TOOL_MESSAGE_CHARS ? text : `${text.slice(0, MAX_TOOL_MESSAGE_CHARS)}… (cut at ${MAX_TOOL_MESSAGE_CHARS} characters)`;
}

/**
 * The tools of one answer: calls them and keeps the record of every call, in order, for the
 * query's transcript. Validates first: a call whose arguments fail the tool's parameters is
 * answered to the model with the problems and never sent.
 */
export class ToolRunner {
  readonly calls: ToolCall[] = [];

  constructor(
    readonly tools: readonly Tool[],
    private readonly agents: TargetAgents,
  ) {}

  /** Calls a tool with validated arguments and records the call. */
  async call(tool: Tool, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResponse> {
    const response = await callTool(tool, args, { agents: this.agents, ...(signal ? { signal } : {}) });
    this.calls.push(response.call);
    return response;
  }

  private invalid(name: string, args: Record<string, unknown>, error: string): string {
    this.calls.push({ name, arguments: args, httpStatus: null, latencyMs: 0, outcome: 'invalid_arguments', error });
    return JSON.stringify({ error });
  }

  /** The tools as the chat model's functions, with the runner's `call` for its tool calls. */
  forModel(): GenerationTools {
    return {
      functions: this.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
      call: async (name, argumentsJson, signal) => {
        const tool = this.tools.find((candidate) => candidate.name === name);
        if (!tool) return this.invalid(name, {}, `There is no tool named ${name}; the tools are: ${this.tools.map((known) => known.name).join(', ')}.`);
        let args: unknown;
        try {
          args = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
        } catch {
          return this.invalid(name, {}, 'The arguments are not valid JSON.');
        }
        if (!isRecord(args)) return this.invalid(name, {}, 'The arguments must be a JSON object.');
        const problems = argumentProblems(tool.parameters, args);
        if (problems.length > 0) {
          return this.invalid(name, args, `The arguments do not match the parameters: ${problems.map((problem) => `${problem.path || '/'} ${problem.message}`).join('; ')}.`);
        }
        const response = await this.call(tool, args, signal);
        return response.call.outcome === 'succeeded' ? toolMessage(response) : JSON.stringify({ error: `The call failed: ${response.call.error}` });
      },
    };
  }
}
