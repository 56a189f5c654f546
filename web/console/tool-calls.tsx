/** Tool calls as the console shows them: in a session's transcript and under "Test this tool". */
import type { ToolCall } from './types.ts';

/** One call's outcome, HTTP status, latency, arguments and error. */
export function ToolCallFacts({ call }: { call: ToolCall }) {
  return (
    <dl class="facts tool-call">
      <dt>Outcome</dt>
      <dd>
        <span class={`badge badge-${call.outcome === 'succeeded' ? 'success' : 'failed'}`}>{call.outcome}</span>
      </dd>
      <dt>HTTP status</dt>
      <dd>{call.httpStatus ?? <span class="muted">no answer</span>}</dd>
      <dt>Latency</dt>
      <dd>{call.latencyMs} ms</dd>
      <dt>Arguments</dt>
      <dd>
        <code>{JSON.stringify(call.arguments)}</code>
      </dd>
      {call.error !== null ? (
        <>
          <dt>Error</dt>
          <dd class="field-error">{call.error}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** The tools an answer called, in order (nothing when it called none). */
export function ToolCallList({ calls }: { calls: ToolCall[] }) {
  if (calls.length === 0) return null;
  return (
    <details class="tool-calls" open>
      <summary>Tool calls ({calls.length})</summary>
      <ol>
        {calls.map((call, index) => (
          <li key={index}>
            <strong>{call.name}</strong>
            <ToolCallFacts call={call} />
          </li>
        ))}
      </ol>
    </details>
  );
}
