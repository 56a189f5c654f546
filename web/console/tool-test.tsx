/**
 * "Test this tool": calls a saved tool with sample arguments through
 * `POST /api/v2/experiences/{id}/tools/{name}/test` and shows what came back, as an answer would
 * see it: the outcome, HTTP status, latency, the API's text and the filled answer template.
 */
import { useState } from 'preact/hooks';
import { Field, messagesAt, parseJsonObject, problemsOf } from './form-fields.tsx';
import { useAction } from './hooks.ts';
import { ToolCallFacts } from './tool-calls.tsx';
import type { Tool, ToolTestResult } from './types.ts';
import { ErrorNotice, useApi } from './ui.tsx';

/** A placeholder value of a JSON Schema type, for the sample arguments' first text. */
function sampleValue(schema: unknown): unknown {
  const type = (schema as { type?: unknown } | undefined)?.type;
  if (type === 'number' || type === 'integer') return 0;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  if (type === 'object') return {};
  return '';
}

/** `{}`, or one key per required parameter: what the operator fills in first. */
export function sampleArguments(parameters: Record<string, unknown>): string {
  const required = Array.isArray(parameters.required) ? parameters.required.filter((name): name is string => typeof name === 'string') : [];
  if (required.length === 0) return '{}';
  const properties = (parameters.properties ?? {}) as Record<string, unknown>;
  return JSON.stringify(Object.fromEntries(required.map((name) => [name, sampleValue(properties[name])])), null, 2);
}

export function ToolTest({ experienceId, tool }: { experienceId: string; tool: Tool }) {
  const api = useApi();
  const [text, setText] = useState(() => sampleArguments(tool.parameters));
  const [result, setResult] = useState<ToolTestResult>();
  const { busy, error, run } = useAction();
  const parsed = parseJsonObject(text);
  // The sample's own JSON problem while typing, then the API's refusal of the arguments (/arguments/...).
  const problems = 'error' in parsed ? [{ path: '/arguments', message: parsed.error }] : problemsOf(error);
  const test = () => {
    if (!('value' in parsed)) return;
    setResult(undefined);
    void run(async () => {
      const path = `/api/v2/experiences/${experienceId}/tools/${encodeURIComponent(tool.name)}/test`;
      setResult(await api.request<ToolTestResult>('POST', path, { json: { arguments: parsed.value } }));
    });
  };
  return (
    <section class="tool-test" aria-label={`Test ${tool.name}`}>
      <Field label="Sample arguments (JSON)" path="/arguments" problems={problems} hint="Calls the saved tool (save first to test changes); not recorded in any session.">
        <textarea rows={3} value={text} spellcheck={false} onInput={(event) => setText(event.currentTarget.value)} />
      </Field>
      <div class="actions">
        <button type="button" disabled={busy || 'error' in parsed} onClick={test}>
          {busy ? 'Testing…' : 'Test this tool'}
        </button>
      </div>
      {messagesAt(problems, '/arguments').length > 0 ? null : <ErrorNotice error={error} />}
      {result ? (
        <div class="tool-test-result" role="status">
          <ToolCallFacts call={result.call} />
          {result.answer !== null ? (
            <>
              <h4>Answer</h4>
              <p class="answer">{result.answer}</p>
            </>
          ) : null}
          {result.response !== null ? (
            <>
              <h4>Response</h4>
              <pre class="json">{result.response}</pre>
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
