import { useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { useData } from './hooks.ts';
import { rememberFileNames } from './jobs.tsx';
import type { Adapter, KnowledgeBase } from './types.ts';
import { acceptedExtensions, fileKey, fileKind, jsonLinesPayload, packDocuments } from './upload-plan.ts';
import { ErrorNotice, RequireScope, useApi } from './ui.tsx';

const jobsPath = '/api/v2/data-ingestion/jobs';
const filesAdapter = 'files';

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** One job to submit: a JSON (Lines) file for a JSON adapter, or documents for the `files` adapter. */
type PlannedJob = { adapterType: string; files: File[] };

/** Every JSON or JSON Lines file a job of its own; the documents packed under the multipart limit. */
function planJobs(files: File[], jsonAdapter: string): PlannedJob[] {
  const json = files.filter((file) => fileKind(file.name) !== 'document').map((file) => ({ adapterType: jsonAdapter, files: [file] }));
  const documents = packDocuments(files.filter((file) => fileKind(file.name) === 'document')).map((group) => ({ adapterType: filesAdapter, files: group }));
  return [...json, ...documents];
}

/** The multipart form of a job: today's `data` part for JSON, one `files` part per document. */
async function jobForm(job: PlannedJob, knowledgeBaseId: string): Promise<FormData> {
  const form = new FormData();
  form.set('adapterType', job.adapterType);
  form.set('knowledgeBaseId', knowledgeBaseId);
  const [first] = job.files;
  if (job.adapterType !== filesAdapter && first) {
    // A JSON file is sent unchanged; JSON Lines are wrapped as the adapter's payload first.
    const data = fileKind(first.name) === 'json-lines' ? new Blob([jsonLinesPayload(await first.text(), job.adapterType, first.name)], { type: 'application/json' }) : first;
    form.set('data', data, first.name);
  } else {
    for (const file of job.files) form.append('files', file, file.name);
  }
  return form;
}

/** Submits the jobs one after the other; stops at the first refusal, keeping the ids of those created. */
async function submitJobs(api: Api, jobs: PlannedJob[], knowledgeBaseId: string): Promise<{ jobIds: string[]; error?: unknown }> {
  const jobIds: string[] = [];
  for (const job of jobs) {
    try {
      const form = await jobForm(job, knowledgeBaseId);
      const submitted = await api.request<{ jobId: string }>('POST', jobsPath, { form });
      jobIds.push(submitted.jobId);
      rememberFileNames(submitted.jobId, job.files.map((file) => file.name));
    } catch (error) {
      return { jobIds, error };
    }
  }
  return { jobIds };
}

/** The chosen files, each with its size, kind and a Remove button. */
function FileList({ files, onRemove }: { files: File[]; onRemove: (file: File) => void }) {
  return (
    <ul class="file-list" aria-label="Chosen files">
      {files.map((file) => (
        <li key={fileKey(file)}>
          <span class="file-name">
            {file.name} ({formatBytes(file.size)})
          </span>
          <span class="muted">{fileKind(file.name) === 'document' ? 'document' : 'records'}</span>
          <button type="button" aria-label={`Remove ${file.name}`} onClick={() => onRemove(file)}>
            Remove
          </button>
        </li>
      ))}
    </ul>
  );
}

/**
 * Files dropped or chosen (several at once), a knowledge base, and for JSON files an adapter:
 * one or more multipart job submissions.
 */
function UploadForm({ onCreated }: { onCreated: (jobIds: string[]) => void }) {
  const api = useApi();
  const adapters = useData((signal) => api.get<Adapter[]>('/api/v2/data-ingestion/adapters', {}, signal), []);
  const knowledgeBases = useData(
    (signal) => api.get<{ knowledgeBases: KnowledgeBase[] }>('/api/v2/knowledge-bases', { limit: 100 }, signal),
    [],
  );
  const [files, setFiles] = useState<File[]>([]);
  const [adapterType, setAdapterType] = useState('');
  const [knowledgeBaseId, setKnowledgeBaseId] = useState('');
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState<unknown>();
  const [sending, setSending] = useState(false);

  const jsonAdapters = (adapters.data ?? []).filter((item) => item.name !== filesAdapter);
  const takesDocuments = (adapters.data ?? []).some((item) => item.name === filesAdapter);
  const adapter = adapterType || jsonAdapters[0]?.name || '';
  const knowledgeBase = knowledgeBaseId || knowledgeBases.data?.knowledgeBases[0]?.id || '';
  const hasJson = files.some((file) => fileKind(file.name) !== 'document');
  const hasDocuments = files.some((file) => fileKind(file.name) === 'document');
  const jobs = planJobs(files, adapter);
  const blocked = (hasJson && !adapter) || (hasDocuments && !takesDocuments);

  const add = (added: FileList | null | undefined) => {
    if (!added || added.length === 0) return;
    // Drops and picks add to the list; the same file twice is kept once.
    setFiles((previous) => {
      const byKey = new Map(previous.map((file) => [fileKey(file), file]));
      for (const file of Array.from(added)) byKey.set(fileKey(file), file);
      return [...byKey.values()];
    });
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (jobs.length === 0) return;
    setSending(true);
    setError(undefined);
    const outcome = await submitJobs(api, jobs, knowledgeBase);
    setSending(false);
    if (outcome.error === undefined) {
      onCreated(outcome.jobIds);
      return;
    }
    // The jobs created before the refusal stay; the list keeps only the files still to send.
    const sent = new Set(jobs.slice(0, outcome.jobIds.length).flatMap((job) => job.files));
    setFiles((previous) => previous.filter((file) => !sent.has(file)));
    setError(outcome.error);
    if (outcome.jobIds.length > 0) onCreated(outcome.jobIds);
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
          add(event.dataTransfer?.files);
        }}
      >
        <p>Drop files here, or choose them: PDF, Word (.docx), HTML, Markdown and text documents, or JSON / JSON Lines records.</p>
        <label class="button">
          Choose files
          <input
            class="visually-hidden"
            type="file"
            name="files"
            multiple
            accept={acceptedExtensions.join(',')}
            onChange={(event) => {
              add(event.currentTarget.files);
              // The same file can be chosen again after it was removed.
              event.currentTarget.value = '';
            }}
          />
        </label>
        {files.length > 0 ? <FileList files={files} onRemove={(removed) => setFiles(files.filter((file) => file !== removed))} /> : null}
      </div>
      {hasDocuments && adapters.data && !takesDocuments ? (
        <p class="notice error" role="alert">
          This service has no <code>files</code> adapter: remove the documents, or upload JSON records only.
        </p>
      ) : null}
      <label>
        Adapter for JSON files
        <select name="adapterType" value={adapter} onChange={(event) => setAdapterType(event.currentTarget.value)}>
          {jsonAdapters.map((item) => (
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
      <button type="submit" class="primary" disabled={jobs.length === 0 || blocked || !knowledgeBase || sending}>
        {sending ? 'Uploading…' : jobs.length > 1 ? `Create ${jobs.length} jobs` : 'Create job'}
      </button>
      <ErrorNotice error={error} />
    </form>
  );
}

export function UploadView({ onCreated }: { onCreated: (jobIds: string[]) => void }) {
  return (
    <section aria-labelledby="upload-title">
      <h2 id="upload-title">Upload content</h2>
      <p class="muted">
        Documents go to the <code>files</code> adapter, several in one job (a new job past 30 MB), which extracts their text. A JSON file
        is sent as it is and a JSON Lines file as its records, each as one job of the adapter chosen, which validates the records before
        the job is created.
      </p>
      <RequireScope scope="data-ingestion:write">
        <UploadForm onCreated={onCreated} />
      </RequireScope>
    </section>
  );
}
