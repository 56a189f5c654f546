/**
 * The operator console: a single-page app over the public API, signed in with a client id and
 * secret. It can do only what the token's scopes allow, and says so when one is missing.
 */
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Api, type ApiError, loadSession, saveSession, type Session, signIn } from './api.ts';
import { ExperienceView, NewExperienceView } from './experience-edit.tsx';
import { ExperiencesView, PlaygroundView } from './experiences.tsx';
import { navigate, useRoute } from './hooks.ts';
import { JobsView, JobView } from './jobs.tsx';
import { insightsStyles, InsightsView } from './insights.tsx';
import { EntriesView, EntryView, KnowledgeBasesView } from './knowledge-bases.tsx';
import { SessionsView, SessionView } from './sessions.tsx';
import { styles } from './styles.ts';
import { ApiContext, ErrorNotice } from './ui.tsx';
import { UploadView } from './upload.tsx';
import { WebhooksView, WebhookView } from './webhooks.tsx';

function SignIn({ onSignedIn, reason }: { onSignedIn: (session: Session) => void; reason: string | undefined }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(String(form.get('clientId') ?? '').trim(), String(form.get('clientSecret') ?? '')));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">lore console</h1>
        <p class="muted">Sign in with an access-token client of your workspace.</p>
        {reason ? (
          <p class="notice" role="status">
            {reason}
          </p>
        ) : null}
        <label>
          Client id
          <input name="clientId" autocomplete="username" required />
        </label>
        <label>
          Client secret
          <input name="clientSecret" type="password" autocomplete="current-password" required />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorNotice error={error} />
      </form>
    </main>
  );
}

const sections = [
  ['jobs', 'Jobs'],
  ['upload', 'Upload'],
  ['knowledge-bases', 'Knowledge bases'],
  ['experiences', 'Experiences'],
  ['playground', 'Playground'],
  ['sessions', 'Sessions'],
  ['insights', 'Insights'],
  ['webhooks', 'Webhooks'],
] as const;

function Page({ route, notice, onCreated }: { route: string[]; notice: string | undefined; onCreated: (jobIds: string[]) => void }) {
  const [section = 'jobs', id, child, childId] = route;
  switch (section) {
    case 'jobs':
      return id ? <JobView jobId={id} /> : <JobsView notice={notice} />;
    case 'upload':
      return <UploadView onCreated={onCreated} />;
    case 'knowledge-bases':
      if (id && child === 'entries' && childId) return <EntryView knowledgeBaseId={id} entryId={childId} />;
      return id ? <EntriesView knowledgeBaseId={id} /> : <KnowledgeBasesView />;
    case 'experiences':
      if (id === 'new') return <NewExperienceView />;
      return id ? <ExperienceView experienceId={id} /> : <ExperiencesView />;
    case 'playground':
      return <PlaygroundView experienceId={id} />;
    case 'sessions':
      return id ? <SessionView sessionId={id} /> : <SessionsView />;
    case 'insights':
      return <InsightsView />;
    case 'webhooks':
      return id ? <WebhookView webhookId={id} /> : <WebhooksView />;
    default:
      return (
        <p class="notice error" role="alert">
          No such page. <a href="#/jobs">Go to the jobs.</a>
        </p>
      );
  }
}

function Console() {
  const [session, setSession] = useState(loadSession);
  const [signOutReason, setSignOutReason] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const route = useRoute();
  const [section = 'jobs'] = route;
  const path = route.join('/');
  // The "job created" notice belongs to the visit of the job list that follows the upload.
  useEffect(() => {
    if (path !== 'jobs') setNotice(undefined);
  }, [path]);

  const signOut = (reason?: string) => {
    saveSession(undefined);
    setSession(undefined);
    setSignOutReason(reason);
  };
  // One client per session; a 401 (expired or revoked token) returns to the sign-in form.
  const api = useMemo(
    () => session && new Api(session, (error: ApiError) => signOut(`Signed out: ${error.body.message}`)),
    [session],
  );

  if (!api || !session) {
    return (
      <SignIn
        reason={signOutReason}
        onSignedIn={(signedIn) => {
          saveSession(signedIn);
          setSession(signedIn);
          setSignOutReason(undefined);
        }}
      />
    );
  }
  return (
    <ApiContext.Provider value={api}>
      <header class="top">
        <strong class="brand">lore console</strong>
        <nav aria-label="Sections">
          {sections.map(([name, label]) => (
            <a key={name} href={`#/${name}`} aria-current={section === name ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who" title={`Scopes: ${session.scopes.join(' ')}`}>
          {session.clientId}
        </span>
        <button type="button" onClick={() => signOut('Signed out.')}>
          Sign out
        </button>
      </header>
      <main class="page">
        <Page
          route={route}
          notice={notice}
          onCreated={(jobIds) => {
            setNotice(jobIds.length === 1 ? `Job ${jobIds[0]} was created.` : `${jobIds.length} jobs were created: ${jobIds.join(', ')}.`);
            navigate('jobs');
          }}
        />
      </main>
    </ApiContext.Provider>
  );
}

const style = document.createElement('style');
style.textContent = styles + insightsStyles;
document.head.append(style);
const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
render(<Console />, root);
