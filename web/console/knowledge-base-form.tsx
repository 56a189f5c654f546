/** Creating, editing and deleting a knowledge base (`POST`, `PATCH`, `DELETE /api/v2/knowledge-bases`). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { changedFields, defined, Field, FormButtons, numberOrUndefined, numberText, problemsOf } from './form-fields.tsx';
import { navigate, useAction } from './hooks.ts';
import type { KnowledgeBase } from './types.ts';
import { ConfirmButton, ErrorNotice, useApi } from './ui.tsx';

const basePath = '/api/v2/knowledge-bases';

type Draft = { name: string; description: string; chunkSize: string; chunkOverlap: string };

/** The request body the draft stands for; blank numbers are left to the API's defaults. */
function toBody(draft: Draft) {
  return defined({
    name: draft.name.trim(),
    description: draft.description.trim(),
    chunkSize: numberOrUndefined(draft.chunkSize),
    chunkOverlap: numberOrUndefined(draft.chunkOverlap),
  });
}

function KnowledgeBaseForm({
  initial,
  label,
  onSave,
  onCancel,
}: {
  initial: Draft;
  label: string;
  /** Sends the body; rejects with the API's error. */
  onSave: (body: ReturnType<typeof toBody>) => Promise<unknown>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState(initial);
  const { busy, error, run } = useAction();
  // The form replaces the button that opened it: the keyboard carries on in its first field.
  const nameField = useRef<HTMLInputElement>(null);
  useEffect(() => nameField.current?.focus(), []);
  const problems = problemsOf(error);
  const input = (name: keyof Draft) => ({ name, value: draft[name], onInput: (event: Event) => setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value }) });
  return (
    <form
      class="edit-form"
      onSubmit={(event) => {
        event.preventDefault();
        void run(() => onSave(toBody(draft)));
      }}
    >
      <Field label="Name" path="/name" problems={problems}>
        <input {...input('name')} ref={nameField} required />
      </Field>
      <Field label="Description" path="/description" problems={problems}>
        <textarea {...input('description')} rows={2} />
      </Field>
      <div class="field-row">
        <Field label="Chunk size" path="/chunkSize" problems={problems} hint="Characters per chunk, 100–8000 (default 800).">
          <input {...input('chunkSize')} type="number" inputMode="numeric" />
        </Field>
        <Field label="Chunk overlap" path="/chunkOverlap" problems={problems} hint="Characters neighbouring chunks share, below the size (default 100).">
          <input {...input('chunkOverlap')} type="number" inputMode="numeric" />
        </Field>
      </div>
      <p class="muted">Chunking applies to content ingested after the change.</p>
      <FormButtons busy={busy} label={label} onCancel={onCancel} />
      <ErrorNotice error={error} />
    </form>
  );
}

/** "New knowledge base", opening the create form; `onCreated` refreshes the list. */
export function CreateKnowledgeBase({ onCreated }: { onCreated: () => void }) {
  const api = useApi();
  const [open, setOpen] = useState(false);
  if (!api.holds('knowledge-bases:write')) return null;
  if (!open) {
    return (
      <button type="button" class="primary" onClick={() => setOpen(true)}>
        New knowledge base
      </button>
    );
  }
  return (
    <div class="card">
      <h3>New knowledge base</h3>
      <KnowledgeBaseForm
        initial={{ name: '', description: '', chunkSize: '', chunkOverlap: '' }}
        label="Create knowledge base"
        onCancel={() => setOpen(false)}
        onSave={async (body) => {
          await api.request('POST', basePath, { json: body });
          setOpen(false);
          onCreated();
        }}
      />
    </div>
  );
}

/** Edit and Delete for the knowledge base whose entries are shown; `onChanged` reloads it. */
export function KnowledgeBaseAdmin({ knowledgeBase, onChanged }: { knowledgeBase: KnowledgeBase; onChanged: () => void }) {
  const api = useApi();
  const [editing, setEditing] = useState(false);
  const removal = useAction();
  if (!api.holds('knowledge-bases:write')) return null;
  const path = `${basePath}/${knowledgeBase.id}`;
  if (editing) {
    return (
      <div class="card">
        <h3>Edit knowledge base</h3>
        <KnowledgeBaseForm
          initial={{
            name: knowledgeBase.name,
            description: knowledgeBase.description,
            chunkSize: numberText(knowledgeBase.chunkSize),
            chunkOverlap: numberText(knowledgeBase.chunkOverlap),
          }}
          label="Save"
          onCancel={() => setEditing(false)}
          onSave={async (body) => {
            const changes = changedFields(body, knowledgeBase);
            if (Object.keys(changes).length > 0) await api.request('PATCH', path, { json: changes });
            setEditing(false);
            onChanged();
          }}
        />
      </div>
    );
  }
  return (
    <div class="actions kb-admin">
      <button type="button" onClick={() => setEditing(true)}>
        Edit
      </button>
      <ConfirmButton
        label="Delete"
        question={`Delete ${knowledgeBase.name} with all its entries, chunks and vectors? Experiences using it stop searching it. This cannot be undone.`}
        confirm="Delete knowledge base"
        disabled={removal.busy}
        onConfirm={() =>
          void removal.run(async () => {
            await api.request('DELETE', path);
            navigate('knowledge-bases');
          })
        }
      />
      <ErrorNotice error={removal.error} />
    </div>
  );
}
