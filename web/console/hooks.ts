import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

// Polling starts at 1 s (a running job visibly moves), and each answer that changed nothing
// stretches the wait by 1.6x up to 30 s, so an idle console left open costs about two requests
// a minute instead of sixty. Any change, or a refresh by the operator, goes back to 1 s.
export const pollMinMs = 1000;
export const pollMaxMs = 30_000;
const pollFactor = 1.6;

/** The wait before the next poll: the minimum after a change, else longer than the last one. */
export function nextDelay(previousMs: number, changed: boolean): number {
  return changed ? pollMinMs : Math.min(pollMaxMs, Math.round(previousMs * pollFactor));
}

export type Loaded<T> = {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again now (and polls from the shortest interval again). */
  refresh: () => void;
};

/**
 * Loads `load()` whenever `deps` change. With `poll`, loads again while `poll(data)` holds, at
 * growing intervals (see nextDelay). A 4xx stops the polling: asking again would not change it.
 */
export function useData<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], poll?: (data: T) => boolean): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [generation, setGeneration] = useState(0);
  const loadedGeneration = useRef(generation);

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay = pollMinMs;
    let lastText: string | undefined;
    let failed = false;
    const schedule = (changed: boolean) => {
      delay = nextDelay(delay, changed);
      timer = setTimeout(run, delay);
    };
    async function run(): Promise<void> {
      try {
        const data = await load(controller.signal);
        if (controller.signal.aborted) return;
        const text = JSON.stringify(data);
        const changed = text !== lastText;
        lastText = text;
        // An unchanged answer renders nothing new: polling an idle list does not re-render it.
        if (changed || failed) setState({ data, error: undefined, loading: false });
        failed = false;
        if (poll?.(data)) schedule(changed);
      } catch (error) {
        if (controller.signal.aborted) return;
        failed = true;
        setState((previous) => ({ data: previous.data, error, loading: false }));
        const clientError = error instanceof ApiError && error.status < 500;
        if (poll && !clientError) schedule(false);
      }
    }
    // New deps clear the old answer (a filter change must not show the old list); a refresh keeps
    // it on screen, with whatever the operator opened below it, until the new answer arrives.
    const refreshing = loadedGeneration.current !== generation;
    loadedGeneration.current = generation;
    if (!refreshing) setState({ data: undefined, error: undefined, loading: true });
    void run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
    // `load` and `poll` are new closures on every render; `deps` say when they mean something new.
  }, [...deps, generation]);

  return { ...state, refresh: () => setGeneration((value) => value + 1) };
}

/** The location hash's path and its query: `#/sessions?feedback=down` -> `sessions`, `feedback=down`. */
function splitHash(): [path: string, query: string] {
  const hash = window.location.hash.replace(/^#\/?/, '');
  const mark = hash.indexOf('?');
  return mark < 0 ? [hash, ''] : [hash.slice(0, mark), hash.slice(mark + 1)];
}

/** A value that follows the location hash, read again on every `hashchange`. */
function useHash<T>(read: () => T): T {
  const [value, setValue] = useState(read);
  useEffect(() => {
    const update = () => setValue(read());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return value;
}

/** The current location hash split into path segments: `#/jobs/ID` -> ['jobs', 'ID']. */
export function useRoute(): string[] {
  return useHash(() => splitHash()[0].split('/').filter(Boolean).map(decodeURIComponent));
}

/**
 * A view's choices kept in the route's query (`#/insights?experienceId=…&from=…`), so a reload or
 * a shared link shows the same view; `set` changes some of them (an empty value drops its key) as
 * a new history entry, so Back returns to the previous choice.
 */
export function useRouteQuery(): { query: URLSearchParams; set: (changes: Record<string, string>) => void } {
  const query = useHash(() => new URLSearchParams(splitHash()[1]));
  const set = (changes: Record<string, string>) => {
    const [path, current] = splitHash();
    const next = new URLSearchParams(current);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    const search = next.toString();
    window.location.hash = `#/${path}${search ? `?${search}` : ''}`;
  };
  return { query, set };
}

/** Goes to a console route (`navigate('jobs', id)`). */
export function navigate(...segments: string[]): void {
  window.location.hash = `#/${segments.map(encodeURIComponent).join('/')}`;
}

export type Action = {
  busy: boolean;
  /** The error of the last run, if it failed. */
  error: unknown;
  /** Runs `action` (one at a time); true when it succeeded. */
  run: (action: () => Promise<unknown>) => Promise<boolean>;
};

/** The state of an operator's action (a button click): busy while it runs, then its error. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
