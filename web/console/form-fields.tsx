/**
 * What the knowledge-base and experience forms share. The forms do not validate: they send what
 * the operator typed and show the API's 400 field errors (`errors[].path`) beside the fields, so
 * the console can never accept or refuse something the API would not.
 */
import { cloneElement, type ComponentChildren, type VNode } from 'preact';
import { useId } from 'preact/hooks';
import { ApiError } from './api.ts';

/** A field error: a JSON pointer into the request body and what is wrong there. */
export type Problem = { path: string; message: string };

/** The field errors of an API answer (none for other errors, which the form's notice shows). */
export function problemsOf(error: unknown): Problem[] {
  return error instanceof ApiError && error.status === 400 ? (error.body.errors ?? []) : [];
}

/**
 * The messages for `path` and below it; `item` names an array element by its index (the origin
 * typed on that line, say) so the operator sees which one was refused.
 */
export function messagesAt(problems: Problem[], path: string, item?: (index: number) => string): string[] {
  return problems
    .filter((problem) => problem.path === path || problem.path.startsWith(`${path}/`))
    .map((problem) => {
      const [index, ...rest] = problem.path.slice(path.length + 1).split('/');
      if (!index) return problem.message;
      const where = item && /^\d+$/.test(index) ? item(Number(index)) : index;
      return `${[where, ...rest].join(' ')}: ${problem.message}`;
    });
}

/** The messages of exactly `path` (a list's own errors, such as too many items). */
export function messagesExactlyAt(problems: Problem[], path: string): string[] {
  return problems.filter((problem) => problem.path === path).map((problem) => problem.message);
}

/** Messages shown beside a field, announced as they appear. */
export function FieldMessages({ messages }: { messages: string[] }) {
  return (
    <>
      {messages.map((message) => (
        <span key={message} class="field-error" role="alert">
          {message}
        </span>
      ))}
    </>
  );
}

/**
 * A labelled control (`children`, one element) with its hint and, after a refused save, the API's
 * messages for `path`, tied to the control by aria-describedby and aria-invalid.
 */
export function Field({
  label,
  path,
  problems,
  hint,
  item,
  children,
}: {
  label: string;
  path: string;
  problems: Problem[];
  hint?: ComponentChildren;
  item?: (index: number) => string;
  children: VNode;
}) {
  const id = useId();
  const messages = messagesAt(problems, path, item);
  const described = [hint ? `${id}-hint` : '', messages.length > 0 ? `${id}-errors` : ''].filter(Boolean).join(' ');
  return (
    <div class={messages.length > 0 ? 'field invalid' : 'field'} data-path={path}>
      <label for={id}>{label}</label>
      {cloneElement(children, { id, 'aria-invalid': messages.length > 0 ? 'true' : undefined, 'aria-describedby': described || undefined })}
      {hint ? (
        <span class="muted hint" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
      {messages.length > 0 ? (
        <span id={`${id}-errors`} class="field-errors">
          <FieldMessages messages={messages} />
        </span>
      ) : null}
    </div>
  );
}

/** Buttons ending a form: submit (disabled and relabelled while saving) and an optional cancel. */
export function FormButtons({ busy, label, onCancel, disabled = false }: { busy: boolean; label: string; onCancel?: () => void; disabled?: boolean }) {
  return (
    <div class="actions form-buttons">
      <button type="submit" class="primary" disabled={busy || disabled}>
        {busy ? 'Saving…' : label}
      </button>
      {onCancel ? (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </div>
  );
}

/** The non-empty lines of a textarea, trimmed (one origin or host per line). */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** A number field's text as a number, or undefined when blank (the API's default applies). */
export function numberOrUndefined(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

export function numberText(value: number | undefined): string {
  return value === undefined ? '' : String(value);
}

/** JSON with object keys sorted, so that two values compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );
}

/** The fields of `next` whose value differs from `current`'s: what a PATCH sends. */
export function changedFields<T extends object>(next: T, current: object): Partial<T> {
  const stored = current as Record<string, unknown>;
  return Object.fromEntries(Object.entries(next).filter(([key, value]) => canonical(value) !== canonical(stored[key]))) as Partial<T>;
}

/** `value` without the keys whose value is undefined (a blank field: the API's default). */
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}

/** JSON text as a value, or the reason it is not JSON (as a field message). */
export function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `is not valid JSON: ${(error as Error).message}` };
  }
}

/** JSON text that must be an object (not an array, string or null), or why it is not one. */
export function parseJsonObject(text: string): { value: Record<string, unknown> } | { error: string } {
  const parsed = parseJson(text);
  if ('error' in parsed) return parsed;
  if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) return { error: 'must be a JSON object' };
  return { value: parsed.value as Record<string, unknown> };
}
