/**
 * The experience form: every field `POST /api/v2/experiences` takes. Settings are merged into the
 * stored ones, so a key this form does not show (one a newer service added) is sent back as it was.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ActionEditor, type ActionDraft, fromDraft, toDraft } from './action-editor.tsx';
import { defined, Field, FieldMessages, FormButtons, lines, messagesAt, messagesExactlyAt, numberOrUndefined, numberText, type Problem, problemsOf } from './form-fields.tsx';
import { useAction } from './hooks.ts';
import { fromToolDraft, ToolEditor, type ToolDraft, toolDraftProblems, toToolDraft } from './tool-editor.tsx';
import type { Experience, ExperienceAction } from './types.ts';
import { ErrorNotice, useNames } from './ui.tsx';

type Settings = Experience['settings'];
export type ExperienceBody = Pick<Experience, 'name' | 'instructions' | 'knowledgeBaseIds' | 'allowedOrigins' | 'requireAuth' | 'actions' | 'settings' | 'tools'> & {
  fallbackMessage?: string;
};

// The widget shows at most four starter questions (the API's maxItems).
const starterSlots = 4;

type Draft = {
  name: string;
  instructions: string;
  fallbackMessage: string;
  knowledgeBaseIds: string[];
  /** One origin pattern per line. */
  allowedOrigins: string;
  requireAuth: boolean;
  ipPerMinute: string;
  sessionPerMinute: string;
  topK: string;
  minScore: string;
  llmProvider: string;
  llmModel: string;
  assistantName: string;
  avatarUrl: string;
  greeting: string;
  starterQuestions: string[];
  /** One host per line. */
  imageHosts: string;
  actions: ActionDraft[];
  tools: ToolDraft[];
};

function toFormDraft(experience: Experience | undefined): Draft {
  const settings = experience?.settings ?? {};
  const widget = settings.widget ?? {};
  const starters = widget.starterQuestions ?? [];
  return {
    name: experience?.name ?? '',
    instructions: experience?.instructions ?? '',
    fallbackMessage: experience?.fallbackMessage ?? '',
    knowledgeBaseIds: experience?.knowledgeBaseIds ?? [],
    allowedOrigins: (experience?.allowedOrigins ?? []).join('\n'),
    requireAuth: experience?.requireAuth ?? false,
    ipPerMinute: numberText(settings.rateLimit?.ipPerMinute),
    sessionPerMinute: numberText(settings.rateLimit?.sessionPerMinute),
    topK: numberText(settings.topK),
    minScore: numberText(settings.minScore),
    llmProvider: settings.llmProvider ?? '',
    llmModel: settings.llmModel ?? '',
    assistantName: widget.assistantName ?? '',
    avatarUrl: widget.avatarUrl ?? '',
    greeting: widget.greeting ?? '',
    starterQuestions: Array.from({ length: Math.max(starterSlots, starters.length) }, (_, index) => starters[index] ?? ''),
    imageHosts: (widget.imageHosts ?? []).join('\n'),
    actions: (experience?.actions ?? []).map(toDraft),
    tools: (experience?.tools ?? []).map(toToolDraft),
  };
}

const text = (value: string) => value.trim() || undefined;
const list = (values: string[]) => (values.length > 0 ? values : undefined);
/** A nested settings object, or undefined when nothing is left in it. */
const nonEmpty = <T extends object>(value: T) => (Object.keys(value).length > 0 ? value : undefined);

/** The stored settings with the form's fields laid over them; a blank field removes its key (the default applies). */
function mergeSettings(stored: Settings, draft: Draft): Settings {
  const rateLimit = defined({ ...stored.rateLimit, ipPerMinute: numberOrUndefined(draft.ipPerMinute), sessionPerMinute: numberOrUndefined(draft.sessionPerMinute) });
  const widget = defined({
    ...stored.widget,
    assistantName: text(draft.assistantName),
    avatarUrl: text(draft.avatarUrl),
    greeting: text(draft.greeting),
    starterQuestions: list(lines(draft.starterQuestions.join('\n'))),
    imageHosts: list(lines(draft.imageHosts)),
  });
  return defined({
    ...stored,
    topK: numberOrUndefined(draft.topK),
    minScore: numberOrUndefined(draft.minScore),
    llmProvider: (draft.llmProvider || undefined) as Settings['llmProvider'],
    llmModel: text(draft.llmModel),
    rateLimit: nonEmpty(rateLimit),
    widget: nonEmpty(widget),
  });
}

/** The body the draft stands for, or the action and tool JSON that could not be read. */
function toBody(draft: Draft, stored: Settings): { body: ExperienceBody } | { problems: Problem[] } {
  const actions: ExperienceAction[] = [];
  const problems: Problem[] = draft.tools.flatMap(toolDraftProblems);
  draft.actions.forEach((action, index) => {
    const result = fromDraft(action, index);
    if ('problems' in result) problems.push(...result.problems);
    else actions.push(result.action);
  });
  if (problems.length > 0) return { problems };
  return {
    body: {
      name: draft.name.trim(),
      instructions: draft.instructions.trim(),
      fallbackMessage: draft.fallbackMessage.trim(),
      knowledgeBaseIds: draft.knowledgeBaseIds,
      allowedOrigins: lines(draft.allowedOrigins),
      requireAuth: draft.requireAuth,
      actions,
      settings: mergeSettings(stored, draft),
      tools: draft.tools.map(fromToolDraft),
    },
  };
}

/** Checkboxes for the workspace's knowledge bases (and any linked one the list does not hold). */
function KnowledgeBasePicker({ selected, problems, onChange }: { selected: string[]; problems: Problem[]; onChange: (ids: string[]) => void }) {
  const names = useNames('knowledge-bases:read', '/api/v2/knowledge-bases', 'knowledgeBases');
  const ids = [...names.keys(), ...selected.filter((id) => !names.has(id))];
  return (
    <fieldset class="kb-picker">
      <legend>Knowledge bases</legend>
      {ids.length === 0 ? <span class="muted">No knowledge bases yet.</span> : null}
      {ids.map((id) => (
        <label key={id} class="check">
          <input
            type="checkbox"
            checked={selected.includes(id)}
            onChange={(event) => onChange(event.currentTarget.checked ? [...selected, id] : selected.filter((item) => item !== id))}
          />{' '}
          {names.get(id) ?? <code>{id}</code>}
        </label>
      ))}
      <FieldMessages messages={messagesAt(problems, '/knowledgeBaseIds', (index) => selected[index] ?? String(index))} />
    </fieldset>
  );
}

export function ExperienceForm({
  experience,
  label,
  onSave,
  onCancel,
}: {
  experience?: Experience;
  label: string;
  /** Sends the body; rejects with the API's error. */
  onSave: (body: ExperienceBody) => Promise<unknown>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState(() => toFormDraft(experience));
  const [localProblems, setLocalProblems] = useState<Problem[]>([]);
  const { busy, error, run } = useAction();
  // A new experience starts in its name; an edited one leaves the focus where it was (on the page's top).
  const nameField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!experience) nameField.current?.focus();
  }, []);
  // A tool's parameters are checked as they are typed (a JSON Schema is long enough to get wrong
  // halfway), the actions' JSON when the form is saved. The save's copies of the tools' problems
  // give way to the live ones, so a box fixed after a refused save is not still marked.
  const toolProblems = draft.tools.flatMap(toolDraftProblems);
  const problems = [...localProblems.filter((problem) => !problem.path.startsWith('/tools/')), ...toolProblems, ...problemsOf(error)];
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((previous) => ({ ...previous, [name]: value }));
  const input = (name: keyof Draft) => ({ name, value: draft[name] as string, onInput: (event: Event) => set(name, (event.currentTarget as HTMLInputElement).value) });
  const origins = lines(draft.allowedOrigins);
  const hosts = lines(draft.imageHosts);
  const submit = (event: Event) => {
    event.preventDefault();
    // Filled starter questions move up, so the API's error indexes name the boxes they are in.
    const starters = lines(draft.starterQuestions.join('\n'));
    const compacted = { ...draft, starterQuestions: Array.from({ length: draft.starterQuestions.length }, (_, index) => starters[index] ?? '') };
    setDraft(compacted);
    const result = toBody(compacted, experience?.settings ?? {});
    setLocalProblems('problems' in result ? result.problems : []);
    if ('body' in result) void run(() => onSave(result.body));
  };
  return (
    <form class="edit-form experience-form" onSubmit={submit}>
      <section class="form-group" aria-label="Basics">
        <h3>Basics</h3>
        <Field label="Name" path="/name" problems={problems}>
          <input {...input('name')} ref={nameField} required />
        </Field>
        <Field label="Instructions" path="/instructions" problems={problems} hint="Free text for the answer generator (tone, what to avoid).">
          <textarea {...input('instructions')} rows={4} />
        </Field>
        <Field label="Fallback message" path="/fallbackMessage" problems={problems} hint="Answered when nothing relevant is found; blank on creation: lore's default.">
          <textarea {...input('fallbackMessage')} rows={2} />
        </Field>
        <KnowledgeBasePicker selected={draft.knowledgeBaseIds} problems={problems} onChange={(ids) => set('knowledgeBaseIds', ids)} />
      </section>
      <section class="form-group" aria-label="Access">
        <h3>Access</h3>
        <Field
          label="Allowed origins"
          path="/allowedOrigins"
          problems={problems}
          item={(index) => origins[index] ?? `line ${index + 1}`}
          hint="One per line, e.g. https://www.example.com or https://*.example.com; none: any site may embed it."
        >
          <textarea {...input('allowedOrigins')} rows={3} autocapitalize="off" spellcheck={false} />
        </Field>
        <Field label="Require a token" path="/requireAuth" problems={problems} hint="Questions need a bearer token with query:execute (the page passes it as data-token).">
          <input type="checkbox" name="requireAuth" checked={draft.requireAuth} onChange={(event) => set('requireAuth', event.currentTarget.checked)} />
        </Field>
        <div class="field-row">
          <Field label="Queries per minute per IP" path="/settings/rateLimit/ipPerMinute" problems={problems} hint="Anonymous visitors; blank: the server's default.">
            <input {...input('ipPerMinute')} type="number" inputMode="numeric" min={1} />
          </Field>
          <Field label="Queries per minute per session" path="/settings/rateLimit/sessionPerMinute" problems={problems} hint="Blank: the server's default.">
            <input {...input('sessionPerMinute')} type="number" inputMode="numeric" min={1} />
          </Field>
        </div>
      </section>
      <section class="form-group" aria-label="Answers">
        <h3>Answers</h3>
        <div class="field-row">
          <Field label="Chunks per answer (topK)" path="/settings/topK" problems={problems} hint="1–50; blank: the default.">
            <input {...input('topK')} type="number" inputMode="numeric" />
          </Field>
          <Field label="Minimum score" path="/settings/minScore" problems={problems} hint="0–1: how relevant a chunk must be.">
            <input {...input('minScore')} type="number" inputMode="decimal" step="any" />
          </Field>
        </div>
        <div class="field-row">
          <Field label="Generator" path="/settings/llmProvider" problems={problems}>
            <select {...input('llmProvider')} onChange={(event) => set('llmProvider', event.currentTarget.value)}>
              <option value="">Server default</option>
              <option value="extractive">extractive</option>
              <option value="openai">openai</option>
            </select>
          </Field>
          <Field label="Model" path="/settings/llmModel" problems={problems} hint="For openai; blank: the server's default.">
            <input {...input('llmModel')} />
          </Field>
        </div>
      </section>
      <section class="form-group" aria-label="Widget">
        <h3>Widget</h3>
        <div class="field-row">
          <Field label="Assistant name" path="/settings/widget/assistantName" problems={problems}>
            <input {...input('assistantName')} />
          </Field>
          <Field label="Avatar URL" path="/settings/widget/avatarUrl" problems={problems} hint="An https image.">
            <input {...input('avatarUrl')} type="url" />
          </Field>
        </div>
        <Field label="Greeting" path="/settings/widget/greeting" problems={problems} hint="The first message of a new conversation.">
          <textarea {...input('greeting')} rows={2} />
        </Field>
        {draft.starterQuestions.map((question, index) => (
          <Field key={index} label={`Starter question ${index + 1}`} path={`/settings/widget/starterQuestions/${index}`} problems={problems}>
            <input value={question} onInput={(event) => set('starterQuestions', draft.starterQuestions.map((item, at) => (at === index ? event.currentTarget.value : item)))} />
          </Field>
        ))}
        <FieldMessages messages={messagesExactlyAt(problems, '/settings/widget/starterQuestions')} />
        <Field
          label="Image hosts"
          path="/settings/widget/imageHosts"
          problems={problems}
          item={(index) => hosts[index] ?? `line ${index + 1}`}
          hint="One host per line (images.example.com or *.example.com) whose https images answers may show."
        >
          <textarea {...input('imageHosts')} rows={2} autocapitalize="off" spellcheck={false} />
        </Field>
      </section>
      <section class="form-group" aria-label="Actions">
        <h3>Actions</h3>
        <ActionEditor drafts={draft.actions} problems={problems} onChange={(actions) => set('actions', actions)} />
      </section>
      <section class="form-group" aria-label="Tools">
        <h3>Tools</h3>
        <ToolEditor drafts={draft.tools} problems={problems} experienceId={experience?.id} saved={experience?.tools ?? []} onChange={(tools) => set('tools', tools)} />
      </section>
      <FormButtons busy={busy} label={label} onCancel={onCancel} />
      {localProblems.length > 0 ? (
        <p class="notice error" role="alert">
          Some actions or tools hold JSON that cannot be read; nothing was saved.
        </p>
      ) : null}
      <ErrorNotice error={error} />
    </form>
  );
}
