/**
 * The action templates of an experience as a list of small forms: id, button label, type and the
 * fields of that type (src/features/experiences/action.schema.ts), and the rarely used icon,
 * style, behavior and visibility as one JSON object. Fields the form does not know are kept.
 */
import { Field, FieldMessages, messagesExactlyAt, parseJson, parseJsonObject, type Problem } from './form-fields.tsx';
import type { ExperienceAction } from './types.ts';

type ActionType = ExperienceAction['action']['type'];
type TypeField = { name: string; label: string; hint?: string; options?: string[]; json?: boolean };

/** What each type asks for, in the words an operator reads; the API checks the values. */
const actionTypes: Record<ActionType, { label: string; fields: TypeField[] }> = {
  trigger_handover: { label: 'Talk to a person (handover)', fields: [{ name: 'agentType', label: 'Agent type', hint: 'Optional: the team that takes over.' }] },
  open_url: {
    label: 'Open a URL',
    fields: [
      { name: 'url', label: 'URL', hint: 'http or https.' },
      { name: 'target', label: 'Opens in', options: ['', '_blank', '_self'] },
    ],
  },
  send_event: {
    label: 'Send an event to the page',
    fields: [
      { name: 'event', label: 'Event name' },
      { name: 'payload', label: 'Payload (JSON object)', json: true, hint: 'Optional.' },
    ],
  },
  send_query: { label: 'Ask a follow-up question', fields: [{ name: 'query', label: 'Question' }] },
};
const typeNames = Object.keys(actionTypes) as ActionType[];
// The optional parts of an action edited as JSON (an icon, and style/behavior/visibility objects).
const extraKeys = ['icon', 'style', 'behavior', 'visibility'] as const;

export type ActionDraft = {
  id: string;
  label: string;
  type: ActionType;
  /** The type's fields as typed (JSON text for a JSON field). */
  fields: Record<string, string>;
  /** Whatever else `action` holds, sent back unchanged. */
  rest: Record<string, unknown>;
  /** icon, style, behavior, visibility as JSON text; blank for none. */
  extra: string;
};

export function toDraft(stored: object): ActionDraft {
  const action = stored as ExperienceAction;
  const { type, ...inner } = action.action;
  const fields: Record<string, string> = {};
  const rest: Record<string, unknown> = { ...inner };
  for (const field of actionTypes[type]?.fields ?? []) {
    const value = inner[field.name];
    if (value === undefined) continue;
    fields[field.name] = field.json || typeof value !== 'string' ? JSON.stringify(value) : value;
    delete rest[field.name];
  }
  const extra = Object.fromEntries(extraKeys.filter((key) => action[key] !== undefined).map((key) => [key, action[key]]));
  return { id: action.id, label: action.label, type, fields, rest, extra: Object.keys(extra).length > 0 ? JSON.stringify(extra, null, 2) : '' };
}

/** The action a draft stands for, or the JSON fields that could not be read (paths as the API's). */
export function fromDraft(draft: ActionDraft, index: number): { action: ExperienceAction } | { problems: Problem[] } {
  const problems: Problem[] = [];
  const inner: Record<string, unknown> = { ...draft.rest, type: draft.type };
  for (const field of actionTypes[draft.type].fields) {
    const text = draft.fields[field.name]?.trim() ?? '';
    if (text === '') continue;
    if (!field.json) inner[field.name] = text;
    else {
      const parsed = parseJson(text);
      if ('error' in parsed) problems.push({ path: `/actions/${index}/action/${field.name}`, message: parsed.error });
      else inner[field.name] = parsed.value;
    }
  }
  let extra: Record<string, unknown> = {};
  if (draft.extra.trim() !== '') {
    const parsed = parseJsonObject(draft.extra);
    if ('error' in parsed) problems.push({ path: `/actions/${index}/extra`, message: parsed.error });
    else extra = parsed.value;
  }
  if (problems.length > 0) return { problems };
  return { action: { ...extra, id: draft.id.trim(), label: draft.label.trim(), action: inner as ExperienceAction['action'] } };
}

function newDraft(drafts: ActionDraft[]): ActionDraft {
  const ids = new Set(drafts.map((draft) => draft.id));
  let number = drafts.length + 1;
  while (ids.has(`action-${number}`)) number += 1;
  return { id: `action-${number}`, label: '', type: 'trigger_handover', fields: {}, rest: {}, extra: '' };
}

function ActionFields({ draft, index, problems, onChange }: { draft: ActionDraft; index: number; problems: Problem[]; onChange: (draft: ActionDraft) => void }) {
  const path = `/actions/${index}`;
  const setField = (name: string, value: string) => onChange({ ...draft, fields: { ...draft.fields, [name]: value } });
  return (
    <>
      <div class="field-row">
        <Field label="Id" path={`${path}/id`} problems={problems}>
          <input value={draft.id} onInput={(event) => onChange({ ...draft, id: event.currentTarget.value })} />
        </Field>
        <Field label="Button label" path={`${path}/label`} problems={problems}>
          <input value={draft.label} onInput={(event) => onChange({ ...draft, label: event.currentTarget.value })} />
        </Field>
      </div>
      <Field label="Type" path={`${path}/action/type`} problems={problems}>
        {/* Another type starts with that type's fields empty: the old type's fields mean nothing to it. */}
        <select value={draft.type} onChange={(event) => onChange({ ...draft, type: event.currentTarget.value as ActionType, fields: {}, rest: {} })}>
          {typeNames.map((type) => (
            <option key={type} value={type}>
              {actionTypes[type].label}
            </option>
          ))}
        </select>
      </Field>
      {actionTypes[draft.type].fields.map((field) => (
        <Field key={field.name} label={field.label} path={`${path}/action/${field.name}`} problems={problems} hint={field.hint}>
          {field.options ? (
            <select value={draft.fields[field.name] ?? ''} onChange={(event) => setField(field.name, event.currentTarget.value)}>
              {field.options.map((option) => (
                <option key={option} value={option}>
                  {option || 'default'}
                </option>
              ))}
            </select>
          ) : field.json ? (
            <textarea rows={2} value={draft.fields[field.name] ?? ''} onInput={(event) => setField(field.name, event.currentTarget.value)} />
          ) : (
            <input value={draft.fields[field.name] ?? ''} onInput={(event) => setField(field.name, event.currentTarget.value)} />
          )}
        </Field>
      ))}
      <Field label="Icon, style, behavior, visibility (JSON)" path={`${path}/extra`} problems={problems} hint='Optional, e.g. {"icon": {"type": "emoji", "content": "💬"}}.'>
        <textarea rows={2} value={draft.extra} onInput={(event) => onChange({ ...draft, extra: event.currentTarget.value })} />
      </Field>
    </>
  );
}

/** The list of action drafts with add, remove and move up. */
export function ActionEditor({ drafts, problems, onChange }: { drafts: ActionDraft[]; problems: Problem[]; onChange: (drafts: ActionDraft[]) => void }) {
  const replace = (index: number, draft: ActionDraft) => onChange(drafts.map((item, at) => (at === index ? draft : item)));
  const moveUp = (index: number) => onChange(drafts.map((item, at) => (at === index - 1 ? drafts[index]! : at === index ? drafts[index - 1]! : item)));
  return (
    <div class="action-editor">
      {drafts.length === 0 ? <p class="muted">No actions: answers show no buttons.</p> : null}
      <FieldMessages messages={messagesExactlyAt(problems, '/actions')} />
      <ol class="action-list">
        {drafts.map((draft, index) => (
          <li key={index} class="action-item">
            <fieldset>
              <legend>
                Action {index + 1}
                {draft.label ? `: ${draft.label}` : ''}
              </legend>
              <FieldMessages messages={messagesExactlyAt(problems, `/actions/${index}`)} />
              <ActionFields draft={draft} index={index} problems={problems} onChange={(next) => replace(index, next)} />
              <div class="actions">
                {index > 0 ? (
                  <button type="button" onClick={() => moveUp(index)}>
                    Move up
                  </button>
                ) : null}
                <button type="button" class="danger" onClick={() => onChange(drafts.filter((_, at) => at !== index))}>
                  Remove action {index + 1}
                </button>
              </div>
            </fieldset>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => onChange([...drafts, newDraft(drafts)])}>
        Add action
      </button>
    </div>
  );
}
