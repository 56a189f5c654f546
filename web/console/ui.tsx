import type { ComponentChildren, VNode } from 'preact';
import { createContext, Fragment } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { type Api, ApiError } from './api.ts';
import { type Loaded, useData } from './hooks.ts';

export const ApiContext = createContext<Api | undefined>(undefined);

/** The signed-in API client; only rendered below the sign-in gate. */
export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside of a signed-in console');
  return api;
}

/**
 * Names by id of the first 100 items of a list (`GET path` -> `{[listKey]: [{id, name}]}`), to
 * label ids shown elsewhere; empty when the token lacks `scope`, and the ids are shown instead.
 */
export function useNames(scope: string, path: string, listKey: string): Map<string, string> {
  const api = useApi();
  const loaded = useData(
    async (signal) =>
      api.holds(scope) ? (await api.get<Record<string, { id: string; name: string }[]>>(path, { limit: 100 }, signal))[listKey] ?? [] : [],
    [scope, path, listKey],
  );
  return new Map((loaded.data ?? []).map((item) => [item.id, item.name]));
}

/** Says which scopes the signed-in token lacks for what the operator tried to see or do. */
/** A choice of one of the workspace's experiences (by name), or all of them: the filter of a list. */
export function ExperienceFilter({ value, names, onChange }: { value: string; names: Map<string, string>; onChange: (experienceId: string) => void }) {
  return (
    <label>
      Experience{' '}
      <select name="experienceId" value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        <option value="">all</option>
        {[...names].map(([id, name]) => (
          <option key={id} value={id}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function ScopeNotice({ scopes }: { scopes: string[] }) {
  const names = scopes.map((scope, index) => (
    <Fragment key={scope}>
      {index > 0 ? ', ' : ''}
      <code>{scope}</code>
    </Fragment>
  ));
  return (
    <div class="notice scope-missing" role="alert">
      <strong>Missing scope.</strong> Your access token lacks {scopes.length > 1 ? 'the scopes' : 'the scope'} {names}, which this needs. Sign in
      with a client that holds it.
    </div>
  );
}

/** An error of the API as the operator should read it; a missing scope gets its own notice. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  if (error instanceof ApiError) {
    if (error.missingScopes.length > 0) return <ScopeNotice scopes={error.missingScopes} />;
    return (
      <div class="notice error" role="alert">
        <strong>
          {error.status} {error.body.error}.
        </strong>{' '}
        {error.body.message}
        {error.body.errors && error.body.errors.length > 1 ? (
          <ul>
            {error.body.errors.slice(0, 10).map((item) => (
              <li key={item.path}>
                <code>{item.path}</code> {item.message}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    );
  }
  return (
    <div class="notice error" role="alert">
      <strong>The service could not be reached.</strong> {error instanceof Error ? error.message : String(error)}
    </div>
  );
}

/** Children, or a notice naming the scope the token lacks for them. */
export function RequireScope({ scope, children }: { scope: string; children: ComponentChildren }) {
  return useApi().holds(scope) ? <>{children}</> : <ScopeNotice scopes={[scope]} />;
}

/** A loaded resource's error and loading line, then `children(data)` once the data is there. */
export function LoadedView<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  return (
    <>
      <ErrorNotice error={loaded.error} />
      {loaded.loading ? (
        <p class="muted" aria-live="polite">
          Loading…
        </p>
      ) : null}
      {loaded.data === undefined ? null : children(loaded.data)}
    </>
  );
}

/** A cell of a `stack` table: it names its column, so a narrow screen shows each row as a labelled card. */
export function Cell({ label, children, class: className }: { label: string; children: ComponentChildren; class?: string }) {
  return (
    <td data-label={label} class={className}>
      <div>{children}</div>
    </td>
  );
}

type TableProps<Row> = { name: string; columns: string[]; rows: Row[]; empty: string; row: (item: Row) => VNode };

/** A table with one header row, or the `empty` line when there are no rows. */
export function Table<Row>({ name, columns, rows, empty, row }: TableProps<Row>) {
  if (rows.length === 0) return <p class="muted">{empty}</p>;
  return (
    <table class={name}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column}>{column}</th>
          ))}
        </tr>
      </thead>
      <tbody>{rows.map(row)}</tbody>
    </table>
  );
}

/** One page of a list answer (`{total, <items>}`) as a table with a pager, or its error. */
export function PagedTable<Answer extends { total: number }, Row>({
  loaded,
  rowsOf,
  offset,
  limit,
  onOffset,
  ...table
}: Omit<TableProps<Row>, 'rows'> & { loaded: Loaded<Answer>; rowsOf: (answer: Answer) => Row[]; offset: number; limit: number; onOffset: (offset: number) => void }) {
  return (
    <LoadedView loaded={loaded}>
      {(answer) => (
        <>
          <Table {...table} rows={rowsOf(answer)} />
          <Pager total={answer.total} offset={offset} limit={limit} onChange={onOffset} />
        </>
      )}
    </LoadedView>
  );
}

/** The link back to the list a detail page was opened from. */
export function BackLink({ href, label }: { href: string; label: string }) {
  return (
    <p>
      <a href={href}>← {label}</a>
    </p>
  );
}

/** A page about one resource named by its id (`Job <id>`): a way back, and its loaded details. */
export function DetailPage<T>({ kind, id, back, loaded, children }: { kind: string; id: string; back: [href: string, label: string]; loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  const titleId = `${kind.toLowerCase()}-title`;
  return (
    <section aria-labelledby={titleId}>
      <BackLink href={back[0]} label={back[1]} />
      <h2 id={titleId}>
        {kind} <code>{id}</code>
      </h2>
      <LoadedView loaded={loaded}>{children}</LoadedView>
    </section>
  );
}

/** How far a job is, as a bar screen readers announce (aria-valuenow in percent), with a class of its own. */
export function ProgressBar({ done, total, class: className }: { done: number; total: number; class?: string | undefined }) {
  const percent = total > 0 ? Math.floor((done / total) * 100) : 0;
  return (
    <div class={className ? `progress ${className}` : 'progress'} role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent} aria-label={`${done} of ${total} records`}>
      <div class="progress-track">
        <div class="progress-fill" style={{ width: `${percent}%` }} />
      </div>
      <span class="progress-text">
        {done} / {total} · {percent} %
      </span>
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

export function Pager({ total, offset, limit, onChange }: { total: number; offset: number; limit: number; onChange: (offset: number) => void }) {
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span>
        {total === 0 ? 0 : offset + 1}–{last} of {total}
      </span>
      <button type="button" disabled={last >= total} onClick={() => onChange(offset + limit)}>
        Next
      </button>
    </nav>
  );
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/**
 * A link opening in a new tab, or the bare text when `url` is not http(s): URLs come from ingested
 * content, and a `javascript:` one must never become a link. The adapters already refuse those;
 * this keeps it so whatever wrote the row.
 */
export function ExternalLink({ url, children }: { url: string | null; children: ComponentChildren }) {
  if (!url || !/^https?:\/\//i.test(url)) return <>{children}</>;
  return (
    <a href={url} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

/** A value as indented JSON, for settings and metadata. */
export function JsonBlock({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

/** A button that asks first: the question with a confirming and a keeping button. */
export function ConfirmButton({
  label,
  question,
  confirm,
  keep = 'Keep it',
  disabled,
  onConfirm,
}: {
  label: string;
  question: string;
  confirm: string;
  /** The text of the button that answers no. */
  keep?: string;
  disabled: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <div class="notice confirm" role="alertdialog" aria-label={label}>
      <p>{question}</p>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirm}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        {keep}
      </button>
    </div>
  );
}
