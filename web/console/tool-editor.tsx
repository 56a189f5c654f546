/**
 * The tools of an experience (src/features/tools/tool.schema.ts) as a list of small forms: name,
 * description, parameters (a JSON Schema, as JSON text), the HTTP call, examples and the answer
 * template, each saved tool with its "Test this tool" panel. Header values are write-only: a
 * stored one reads back as "***", is shown as an empty masked field and sent back as "***" (the
 * API keeps the stored value) unless the operator types a new one.
 */
import { defined, Field, FieldMessages, lines, messagesExactlyAt, numberOrUndefined, numberText, parseJsonObject, type Problem } from './form-fields.tsx';
import { ToolTest } from './tool-test.tsx';
import type { Tool } from './types.ts';

/** What reads show instead of a header value (MASKED in tool.schema.ts). */
const MASKED = '***';

type HeaderDraft = {
  name: string;
  /** As typed; blank for a stored value that is kept. */
  value: string;
  /** The value is stored and read back masked: blank `value` keeps it. */
  stored: boolean;
};

export type ToolDraft = {
  /** The list's own key for the tool (stable across removals above it), never sent. */
  key: number;
  name: string;
  description: string;
  /** The parameters' JSON Schema as JSON text. */
  parameters: string;
  method: Tool['http']['method'];
  url: string;
  headers: HeaderDraft[];
  timeoutMs: string;
  /** One example question per line. */
  examples: string;
  answerTemplate: string;
};

let nextKey = 0;

// A new tool starts with a parameters object the API accepts, so the operator fills properties in.
const emptyParameters = { type: 'object', properties: {}, required: [] };

export function toToolDraft(tool: Tool): ToolDraft {
  return {
    key: nextKey++,
    name: tool.name,
    description: tool.description,
    parameters: JSON.stringify(tool.parameters, null, 2),
    method: tool.http.method,
    url: tool.http.url,
    headers: Object.entries(tool.http.headers ?? {}).map(([name, value]) => (value === MASKED ? { name, value: '', stored: true } : { name, value, stored: false })),
    timeoutMs: numberText(tool.http.timeoutMs),
    examples: tool.examples.join('\n'),
    answerTemplate: tool.answerTemplate ?? '',
  };
}

function newToolDraft(drafts: ToolDraft[]): ToolDraft {
  const names = new Set(drafts.map((draft) => draft.name));
  let number = drafts.length + 1;
  while (names.has(`tool_${number}`)) number += 1;
  return toToolDraft({ name: `tool_${number}`, description: '', parameters: emptyParameters, http: { method: 'GET', url: '' }, examples: [] });
}

/** The JSON of a draft that cannot be read, with the API's paths: checked as the operator types. */
export function toolDraftProblems(draft: ToolDraft, index: number): Problem[] {
  const parsed = parseJsonObject(draft.parameters);
  return 'error' in parsed ? [{ path: `/tools/${index}/parameters`, message: parsed.error }] : [];
}

/** The tool a draft stands for; call it only when toolDraftProblems finds nothing. */
export function fromToolDraft(draft: ToolDraft): Tool {
  const parsed = parseJsonObject(draft.parameters);
  const headers = draft.headers
    .filter((header) => header.name.trim() !== '' || header.value !== '')
    .map(({ name, value, stored }) => [name.trim(), stored && value === '' ? MASKED : value] as const);
  return defined({
    name: draft.name.trim(),
    description: draft.description.trim(),
    parameters: 'value' in parsed ? parsed.value : {},
    http: defined({
      method: draft.method,
      url: draft.url.trim(),
      headers: headers.length > 0 ? Object.fromEntries(headers) : undefined,
      timeoutMs: numberOrUndefined(draft.timeoutMs),
    }),
    examples: lines(draft.examples),
    answerTemplate: draft.answerTemplate.trim() || undefined,
  });
}

/** A header name as a JSON pointer segment (RFC 6901), as the API's error paths write it. */
const pointerSegment = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

function HeaderRows({ headers, at, problems, onChange }: { headers: HeaderDraft[]; at: string; problems: Problem[]; onChange: (headers: HeaderDraft[]) => void }) {
  const replace = (index: number, header: HeaderDraft) => onChange(headers.map((item, position) => (position === index ? header : item)));
  return (
    <fieldset class="tool-headers">
      <legend>Headers</legend>
      <FieldMessages messages={messagesExactlyAt(problems, at)} />
      {headers.length === 0 ? <span class="muted">No headers.</span> : null}
      {headers.map((header, index) => {
        // The API's errors for this header (its name or its value) show under the value.
        const path = `${at}/${pointerSegment(header.name.trim())}`;
        return (
          <div key={index} class="header-row">
            <Field label={`Header ${index + 1} name`} path={path} problems={[]}>
              <input value={header.name} autocapitalize="off" spellcheck={false} onInput={(event) => replace(index, { ...header, name: event.currentTarget.value })} />
            </Field>
            {/* A password field: a header usually carries an API key, which must not show on screen. */}
            <Field label={`Header ${index + 1} value`} path={path} problems={header.name.trim() ? problems : []}>
              <input
                type="password"
                autocomplete="new-password"
                value={header.value}
                placeholder={header.stored ? 'stored value — leave to keep' : ''}
                onInput={(event) => replace(index, { ...header, value: event.currentTarget.value })}
              />
            </Field>
            <button type="button" class="danger" onClick={() => onChange(headers.filter((_, position) => position !== index))}>
              Remove header {index + 1}
            </button>
          </div>
        );
      })}
      <button type="button" onClick={() => onChange([...headers, { name: '', value: '', stored: false }])}>
        Add header
      </button>
    </fieldset>
  );
}

function ToolFields({ draft, index, problems, onChange }: { draft: ToolDraft; index: number; problems: Problem[]; onChange: (draft: ToolDraft) => void }) {
  const at = `/tools/${index}`;
  const set = <K extends keyof ToolDraft>(name: K, value: ToolDraft[K]) => onChange({ ...draft, [name]: value });
  const examples = lines(draft.examples);
  return (
    <>
      <div class="field-row">
        <Field label="Tool name" path={`${at}/name`} problems={problems} hint="Letters, digits, _ and -; unique in the experience.">
          <input value={draft.name} autocapitalize="off" spellcheck={false} onInput={(event) => set('name', event.currentTarget.value)} />
        </Field>
        <Field label="Method" path={`${at}/http/method`} problems={problems}>
          <select value={draft.method} onChange={(event) => set('method', event.currentTarget.value as ToolDraft['method'])}>
            <option value="GET">GET</option>
            <option value="POST">POST</option>
          </select>
        </Field>
      </div>
      <Field label="Description" path={`${at}/description`} problems={problems} hint="What the tool does, as the chat model is told.">
        <textarea rows={2} value={draft.description} onInput={(event) => set('description', event.currentTarget.value)} />
      </Field>
      <Field label="URL" path={`${at}/http/url`} problems={problems} hint="https; {name} placeholders are filled from the parameters, e.g. https://api.example.com/orders/{orderId}.">
        <input value={draft.url} type="text" inputMode="url" autocapitalize="off" spellcheck={false} onInput={(event) => set('url', event.currentTarget.value)} />
      </Field>
      <Field label="Parameters (JSON Schema)" path={`${at}/parameters`} problems={problems} hint='An object schema, e.g. {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}.'>
        <textarea rows={6} value={draft.parameters} spellcheck={false} onInput={(event) => set('parameters', event.currentTarget.value)} />
      </Field>
      <HeaderRows headers={draft.headers} at={`${at}/http/headers`} problems={problems} onChange={(headers) => set('headers', headers)} />
      <div class="field-row">
        <Field label="Timeout (ms)" path={`${at}/http/timeoutMs`} problems={problems} hint="100–30000; blank: 5000.">
          <input value={draft.timeoutMs} type="number" inputMode="numeric" min={100} max={30000} onInput={(event) => set('timeoutMs', event.currentTarget.value)} />
        </Field>
      </div>
      <Field
        label="Examples"
        path={`${at}/examples`}
        problems={problems}
        item={(line) => examples[line] ?? `line ${line + 1}`}
        hint="Questions the tool answers, one per line (1–20): offline, a question close to one of them calls the tool."
      >
        <textarea rows={3} value={draft.examples} onInput={(event) => set('examples', event.currentTarget.value)} />
      </Field>
      <Field label="Answer template" path={`${at}/answerTemplate`} problems={problems} hint="Optional offline answer, e.g. Your order {orderId} is {status}: {name} is a parameter or a field of the API's JSON.">
        <textarea rows={2} value={draft.answerTemplate} onInput={(event) => set('answerTemplate', event.currentTarget.value)} />
      </Field>
    </>
  );
}

/**
 * The list of tool drafts with add and remove. `experienceId` and `saved` (the stored tools) say
 * which drafts can be tested: the test calls the stored tool of the draft's name.
 */
export function ToolEditor({
  drafts,
  problems,
  experienceId,
  saved,
  onChange,
}: {
  drafts: ToolDraft[];
  problems: Problem[];
  experienceId: string | undefined;
  saved: Tool[];
  onChange: (drafts: ToolDraft[]) => void;
}) {
  return (
    <div class="tool-editor">
      {drafts.length === 0 ? <p class="muted">No tools: answers come from the knowledge bases only.</p> : null}
      <FieldMessages messages={messagesExactlyAt(problems, '/tools')} />
      <ol class="action-list">
        {drafts.map((draft, index) => {
          const stored = saved.find((tool) => tool.name === draft.name.trim());
          return (
            <li key={draft.key} class="action-item">
              <fieldset>
                <legend>
                  Tool {index + 1}
                  {draft.name ? `: ${draft.name}` : ''}
                </legend>
                {/* The tool's and its call's own errors (a missing field, one the API does not know). */}
                <FieldMessages messages={[...messagesExactlyAt(problems, `/tools/${index}`), ...messagesExactlyAt(problems, `/tools/${index}/http`)]} />
                <ToolFields draft={draft} index={index} problems={problems} onChange={(next) => onChange(drafts.map((item, at) => (at === index ? next : item)))} />
                {experienceId && stored ? (
                  <ToolTest experienceId={experienceId} tool={stored} />
                ) : (
                  <p class="muted tool-unsaved">Save the experience to test this tool.</p>
                )}
                <div class="actions">
                  <button type="button" class="danger" onClick={() => onChange(drafts.filter((_, at) => at !== index))}>
                    Remove tool {index + 1}
                  </button>
                </div>
              </fieldset>
            </li>
          );
        })}
      </ol>
      <button type="button" onClick={() => onChange([...drafts, newToolDraft(drafts)])}>
        Add tool
      </button>
    </div>
  );
}
