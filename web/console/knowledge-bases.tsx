import { useState } from 'preact/hooks';
import { navigate, useAction, useData } from './hooks.ts';
import { CreateKnowledgeBase, KnowledgeBaseAdmin } from './knowledge-base-form.tsx';
import type { Entry, EntryWithChunks, KnowledgeBase } from './types.ts';
import { BackLink, Cell, ConfirmButton, ErrorNotice, ExternalLink, formatTime, JsonBlock, LoadedView, PagedTable, useApi } from './ui.tsx';

const basePath = '/api/v2/knowledge-bases';
const pageSize = 20;

/** A knowledge base's entry count: the `total` of its entry list, asked for one entry. */
function EntryCount({ knowledgeBaseId }: { knowledgeBaseId: string }) {
  const api = useApi();
  const count = useData((signal) => api.get<{ total: number }>(`${basePath}/${knowledgeBaseId}/entries`, { limit: 1 }, signal), [knowledgeBaseId]);
  if (count.error) return <span class="muted">?</span>;
  return <span class="entry-count">{count.data ? count.data.total : '…'}</span>;
}

export function KnowledgeBasesView() {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  const list = useData(
    (signal) => api.get<{ total: number; knowledgeBases: KnowledgeBase[] }>(basePath, { limit: pageSize, offset }, signal),
    [offset],
  );
  return (
    <section aria-labelledby="kb-title">
      <h2 id="kb-title">Knowledge bases</h2>
      <CreateKnowledgeBase onCreated={list.refresh} />
      <PagedTable
        loaded={list}
        rowsOf={(answer) => answer.knowledgeBases}
        offset={offset}
        limit={pageSize}
        onOffset={setOffset}
        name="knowledge-bases stack"
        columns={['Name', 'Entries', 'Chunking', 'Embeddings', 'Updated']}
        empty="No knowledge bases."
        row={(knowledgeBase) => (
          <tr key={knowledgeBase.id} data-knowledge-base-id={knowledgeBase.id}>
            <Cell label="Name">
              <a href={`#/knowledge-bases/${knowledgeBase.id}`}>{knowledgeBase.name}</a>
              {knowledgeBase.description ? <div class="muted">{knowledgeBase.description}</div> : null}
            </Cell>
            <Cell label="Entries">
              <EntryCount knowledgeBaseId={knowledgeBase.id} />
            </Cell>
            <Cell label="Chunking">
              {knowledgeBase.chunkSize} chars, {knowledgeBase.chunkOverlap} overlap
            </Cell>
            <Cell label="Embeddings">
              {knowledgeBase.embedding
                ? `${knowledgeBase.embedding.provider}/${knowledgeBase.embedding.model} (${knowledgeBase.embedding.dimension})`
                : 'none yet'}
            </Cell>
            <Cell label="Updated">{formatTime(knowledgeBase.updatedAt)}</Cell>
          </tr>
        )}
      />
    </section>
  );
}

/** The entries of a knowledge base, searchable by title and tag. */
export function EntriesView({ knowledgeBaseId }: { knowledgeBaseId: string }) {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  const [search, setSearch] = useState({ q: '', tag: '' });
  const [draft, setDraft] = useState({ q: '', tag: '' });
  const knowledgeBase = useData((signal) => api.get<KnowledgeBase>(`${basePath}/${knowledgeBaseId}`, {}, signal), [knowledgeBaseId]);
  const entries = useData(
    (signal) =>
      api.get<{ total: number; entries: Entry[] }>(`${basePath}/${knowledgeBaseId}/entries`, { limit: pageSize, offset, ...search }, signal),
    [knowledgeBaseId, offset, search.q, search.tag],
  );
  return (
    <section aria-labelledby="entries-title">
      <BackLink href="#/knowledge-bases" label="Knowledge bases" />
      <h2 id="entries-title">Entries of {knowledgeBase.data?.name ?? 'the knowledge base'}</h2>
      {knowledgeBase.data ? <KnowledgeBaseAdmin key={knowledgeBase.data.updatedAt} knowledgeBase={knowledgeBase.data} onChanged={knowledgeBase.refresh} /> : null}
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setOffset(0);
          setSearch(draft);
        }}
      >
        <input name="q" type="search" placeholder="Title contains" value={draft.q} onInput={(event) => setDraft({ ...draft, q: event.currentTarget.value })} />
        <input name="tag" placeholder="Tag" value={draft.tag} onInput={(event) => setDraft({ ...draft, tag: event.currentTarget.value })} />
        <button type="submit">Search</button>
      </form>
      <PagedTable
        loaded={entries}
        rowsOf={(answer) => answer.entries}
        offset={offset}
        limit={pageSize}
        onOffset={setOffset}
        name="entries stack"
        columns={['Title', 'Record id', 'Type', 'Tags', 'Chunks', 'Updated']}
        empty="No entries."
        row={(entry) => (
          <tr key={entry.id}>
            <Cell label="Title">
              <a href={`#/knowledge-bases/${knowledgeBaseId}/entries/${entry.id}`}>{entry.title}</a>
            </Cell>
            <Cell label="Record id">
              <code>{entry.recordId}</code>
            </Cell>
            <Cell label="Type">{entry.contentType}</Cell>
            <Cell label="Tags">{entry.tags.join(', ')}</Cell>
            <Cell label="Chunks">{entry.chunkCount}</Cell>
            <Cell label="Updated">{formatTime(entry.updatedAt)}</Cell>
          </tr>
        )}
      />
    </section>
  );
}

/**
 * Deletes the entry with its chunks, once the operator confirms, then goes back to the entries.
 * A later job with the same record id creates it again; a deletion record (`deleted: true`) is
 * how a source system removes it for good.
 */
function DeleteEntry({ entry }: { entry: EntryWithChunks }) {
  const api = useApi();
  const { busy, error, run } = useAction();
  if (!api.holds('knowledge-bases:write')) return null;
  const remove = async () => {
    if (await run(() => api.request('DELETE', `${basePath}/${entry.knowledgeBaseId}/entries/${entry.id}`))) navigate('knowledge-bases', entry.knowledgeBaseId);
  };
  return (
    <div class="actions">
      <ConfirmButton
        label="Delete entry"
        question={`Delete "${entry.title}" and its ${entry.chunks.length} chunks? Answers stop citing it at once. Ingesting record ${entry.recordId} again creates it anew.`}
        confirm="Delete"
        disabled={busy}
        onConfirm={() => void remove()}
      />
      <ErrorNotice error={error} />
    </div>
  );
}

/** One entry: its fields, its content and the chunks it was split into. */
export function EntryView({ knowledgeBaseId, entryId }: { knowledgeBaseId: string; entryId: string }) {
  const api = useApi();
  const entry = useData((signal) => api.get<EntryWithChunks>(`${basePath}/${knowledgeBaseId}/entries/${entryId}`, {}, signal), [knowledgeBaseId, entryId]);
  return (
    <section aria-labelledby="entry-title">
      <BackLink href={`#/knowledge-bases/${knowledgeBaseId}`} label="Entries" />
      <LoadedView loaded={entry}>
        {(value) => (
          <>
            <h2 id="entry-title">{value.title}</h2>
            <DeleteEntry entry={value} />
            <dl class="facts">
              <dt>Record id</dt>
              <dd>
                <code>{value.recordId}</code>
              </dd>
              <dt>Content type</dt>
              <dd>{value.contentType}</dd>
              <dt>URL</dt>
              <dd>
                <ExternalLink url={value.url}>{value.url ?? '—'}</ExternalLink>
              </dd>
              <dt>Tags</dt>
              <dd>{value.tags.length > 0 ? value.tags.join(', ') : '—'}</dd>
              <dt>Created / updated</dt>
              <dd>
                {formatTime(value.createdAt)} / {formatTime(value.updatedAt)}
              </dd>
              <dt>Content hash</dt>
              <dd>
                <code>{value.contentHash}</code>
              </dd>
            </dl>
            {Object.keys(value.metadata).length > 0 ? (
              <details>
                <summary>Metadata</summary>
                <JsonBlock value={value.metadata} />
              </details>
            ) : null}
            <details>
              <summary>Content ({value.content.length} characters)</summary>
              <pre class="content">{value.content}</pre>
            </details>
            <h3>Chunks ({value.chunks.length})</h3>
            <ol class="chunks">
              {value.chunks.map((chunk) => (
                <li key={chunk.id} class="chunk">
                  <div class="muted">
                    #{chunk.ordinal} · characters {chunk.start}–{chunk.end}
                    {chunk.headingPath.length > 0 ? ` · ${chunk.headingPath.join(' › ')}` : ''}
                  </div>
                  <pre>{chunk.text}</pre>
                </li>
              ))}
            </ol>
          </>
        )}
      </LoadedView>
    </section>
  );
}
