import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { RefusedTarget, type TargetAgents } from '../webhooks/send-webhook.ts';
import { privateAddress } from '../webhooks/target-url.ts';
import { toolRequest } from './tool-request.ts';
import { DEFAULT_TOOL_TIMEOUT_MS, type Tool, type ToolCall } from './tool.schema.ts';

// The most of a response lore reads: a lookup answers a record, a few KB; 64 KB leaves room for a
// list, and a larger body fails loudly rather than filling memory on every query.
export const MAX_RESPONSE_BYTES = 64 * 1024;
// A non-2xx body is kept only as an excerpt in the call's error, as for webhooks.
const EXCERPT_CHARS = 200;

/** What a call gave: its record, and the body of a 2xx answer (parsed when it is JSON). */
export type ToolResponse = { call: ToolCall; text: string | null; json: unknown };

function parsedJson(text: string, contentType: string | undefined): { json: unknown } | { error: string } | undefined {
  const declared = contentType !== undefined && /\bjson\b/i.test(contentType);
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return declared ? { error: 'The API answered invalid JSON.' } : undefined;
  }
}

/**
 * Calls a tool with arguments already validated against its parameters; never throws. Redirects
 * are not followed (the target was checked, where it points was not), the whole call is bounded by
 * the tool's `timeoutMs`, and the body by MAX_RESPONSE_BYTES. Header values go on the wire only.
 */
export function callTool(tool: Tool, args: Record<string, unknown>, options: { agents: TargetAgents; signal?: AbortSignal }): Promise<ToolResponse> {
  const started = performance.now();
  const record = (fields: Pick<ToolCall, 'httpStatus' | 'outcome' | 'error'>): ToolCall => ({
    name: tool.name,
    arguments: args,
    latencyMs: Math.round(performance.now() - started),
    ...fields,
  });
  const { url, body } = toolRequest(tool, args);
  // A literal address is connected to without a lookup; creation refused private ones, but a tool
  // stored while TOOLS_ALLOW_PRIVATE_TARGETS was on may name one.
  const refused = options.agents.screened ? privateAddress(url.hostname.replace(/^\[|\]$/g, '')) : undefined;
  if (refused) {
    const error = `Refused to connect: the tool's address is a loopback, private, link-local or metadata address (${refused}); TOOLS_ALLOW_PRIVATE_TARGETS is off.`;
    return Promise.resolve({ call: record({ httpStatus: null, outcome: 'refused', error }), text: null, json: undefined });
  }
  const timeoutMs = tool.http.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    const finish = (response: ToolResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(response);
    };
    const fail = (fields: Pick<ToolCall, 'httpStatus' | 'outcome' | 'error'>) => finish({ call: record(fields), text: null, json: undefined });
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: tool.http.method,
      agent: url.protocol === 'https:' ? options.agents.https : options.agents.http,
      headers: {
        ...tool.http.headers,
        accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
        'user-agent': 'lore-tools/1',
        ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
      },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy();
    }, timeoutMs);
    request.on('error', (error) => {
      if (timedOut) return fail({ httpStatus: null, outcome: 'timed_out', error: `No complete answer within ${timeoutMs} ms.` });
      if (error instanceof RefusedTarget) return fail({ httpStatus: null, outcome: 'refused', error: `Refused to connect: ${error.message}; TOOLS_ALLOW_PRIVATE_TARGETS is off.` });
      const code = (error as NodeJS.ErrnoException).code;
      fail({ httpStatus: null, outcome: 'failed', error: code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message });
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_RESPONSE_BYTES) {
          return fail({ httpStatus: status, outcome: 'failed', error: `The API answered more than ${MAX_RESPONSE_BYTES / 1024} KB.` });
        }
        chunks.push(chunk);
      });
      response.on('error', (error) => {
        if (timedOut) return fail({ httpStatus: status, outcome: 'timed_out', error: `No complete answer within ${timeoutMs} ms.` });
        fail({ httpStatus: status, outcome: 'failed', error: `The answer was cut short: ${error.message}` });
      });
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (status >= 300 && status < 400) {
          return fail({ httpStatus: status, outcome: 'failed', error: `The API answered a redirect (${status}), which tools do not follow.` });
        }
        if (status < 200 || status >= 300) {
          const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS);
          return fail({ httpStatus: status, outcome: 'failed', error: `The API answered ${status}${excerpt ? `: ${excerpt}` : '.'}` });
        }
        const parsed = parsedJson(text, response.headers['content-type']);
        if (parsed && 'error' in parsed) return fail({ httpStatus: status, outcome: 'failed', error: parsed.error });
        finish({ call: record({ httpStatus: status, outcome: 'succeeded', error: null }), text, json: parsed?.json });
      });
    });
    request.end(body);
  });
}
