import { useState } from 'preact/hooks';
import { useData } from './hooks.ts';
import type { Adapter, KnowledgeBase } from './types.ts';
import { ErrorNotice, RequireScope, useApi } from './ui.tsx';

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A JSON file dropped or chosen, an adapter and a knowledge base: a multipart job submission. */
function UploadForm({ onCreated }: { onCreated: (jobId: string) => void }) {
  const api = useApi();
  const adapters = useData((signal) => api.get<Adapter[]>('/api/v2/data-ingestion/adapters', {}, signal), []);
  const knowledgeBases = useData(
    (signal) => api.get<{ knowledgeBases: KnowledgeBase[] }>('/api/v2/knowledge-bases', { limit: 100 }, signal),
    [],
  );
  const [file, setFile] = useState<File>();
  const [adapterType, setAdapterType] = useState('');
  const [knowledgeBaseId, setKnowledgeBaseId] = useState('');
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState<unknown>();
  const [sending, setSending] = useState(false);

  const adapter = adapterType || adapters.data?.[0]?.name || '';
  const knowledgeBase = knowledgeBaseId || knowledgeBases.data?.knowledgeBases[0]?.id || '';

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file) return;
    const form = new FormData();
    form.set('adapterType', adapter);
    form.set('knowledgeBaseId', knowledgeBase);
    form.set('data', file, file.name);
    setSending(true);
    setError(undefined);
    try {
      const submitted = await api.request<{ jobId: string }>('POST', '/api/v2/data-ingestion/jobs', { form });
      onCreated(submitted.jobId);
    } catch (caught) {
      setError(caught);
    } finally {
      setSending(false);
    }
  };

  return (
    <form class="upload" onSubmit={submit}>
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          const dropped = event.dataTransfer?.files[0];
          if (dropped) setFile(dropped);
        }}
      >
        <p>{file ? `${file.name} (${formatBytes(file.size)})` : 'Drop a JSON file here, or choose one.'}</p>
        <label class="button">
          Choose file
          <input
            class="visually-hidden"
            type="file"
            name="data"
            accept=".json,application/json"
            onChange={(event) => setFile(event.currentTarget.files?.[0])}
          />
        </label>
      </div>
      <label>
        Adapter
        <select name="adapterType" value={adapter} onChange={(event) => setAdapterType(event.currentTarget.value)}>
          {(adapters.data ?? []).map((item) => (
            <option key={item.name} value={item.name}>
              {item.name} ({item.format} {item.version})
            </option>
          ))}
        </select>
      </label>
      <ErrorNotice error={adapters.error} />
      <label>
        Knowledge base
        {knowledgeBases.error ? (
          // Without knowledge-bases:read the list is refused; an id typed in still works.
          <input name="knowledgeBaseId" placeholder="Knowledge base id" value={knowledgeBaseId} onInput={(event) => setKnowledgeBaseId(event.currentTarget.value)} />
        ) : (
          <select name="knowledgeBaseId" value={knowledgeBase} onChange={(event) => setKnowledgeBaseId(event.currentTarget.value)}>
            {(knowledgeBases.data?.knowledgeBases ?? []).map((item) => (
              <option key={item.id} value={item.id}>
                {item.name}
              </option>
            ))}
          </select>
        )}
      </label>
      <ErrorNotice error={knowledgeBases.error} />
      <button type="submit" class="primary" disabled={!file || !adapter || !knowledgeBase || sending}>
        {sending ? 'Uploading…' : 'Create job'}
      </button>
      <ErrorNotice error={error} />
    </form>
  );
}

export function UploadView({ onCreated }: { onCreated: (jobId: string) => void }) {
  return (
    <section aria-labelledby="upload-title">
      <h2 id="upload-title">Upload content</h2>
      <p class="muted">
        The file is sent as it is (multipart) and becomes an ingestion job; its records are validated by the adapter before the job is
        created.
      </p>
      <RequireScope scope="data-ingestion:write">
        <UploadForm onCreated={onCreated} />
      </RequireScope>
    </section>
  );
}
