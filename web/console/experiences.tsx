import { Fragment } from 'preact';
import { EmbedSnippet } from './embed-snippet.tsx';
import { navigate, useData } from './hooks.ts';
import type { Experience } from './types.ts';
import { ErrorNotice, formatTime, JsonBlock, LoadedView, useApi, useNames } from './ui.tsx';

export const experiencesPath = '/api/v2/experiences';

/**
 * The workspace's experiences (the first 100: a console lists, it does not page through
 * thousands), read again whenever `deps` change.
 */
function useExperiences(deps: unknown[] = []) {
  const api = useApi();
  return useData((signal) => api.get<{ total: number; experiences: Experience[] }>(experiencesPath, { limit: 100 }, signal), deps);
}

/** An action template's button text (the schema serializes templates as stored objects). */
function actionLabel(action: object): string {
  const template = action as { id?: unknown; label?: unknown };
  return String(template.label ?? template.id);
}

/** An experience with its knowledge bases, access rules, settings and actions. */
function ExperienceCard({ experience, knowledgeBaseNames: names }: { experience: Experience; knowledgeBaseNames: Map<string, string> }) {
  return (
    <article class="card experience" data-experience-id={experience.id}>
      <header class="section-header">
        <h3>{experience.name}</h3>
        <a class="button" href={`#/experiences/${experience.id}`}>
          Edit
        </a>
        <a class="button" href={`#/playground/${experience.id}`}>
          Try in playground
        </a>
        <a class="button" href={`#/sessions?experienceId=${experience.id}`}>
          Sessions
        </a>
      </header>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{experience.id}</code>
        </dd>
        <dt>Knowledge bases</dt>
        <dd>
          {experience.knowledgeBaseIds.length === 0
            ? 'none'
            : experience.knowledgeBaseIds.map((id, index) => (
                <Fragment key={id}>
                  {index > 0 ? ', ' : ''}
                  <a href={`#/knowledge-bases/${id}`}>{names.get(id) ?? <code>{id.slice(0, 8)}</code>}</a>
                </Fragment>
              ))}
        </dd>
        <dt>Access</dt>
        <dd>
          {experience.requireAuth ? 'token with query:execute required' : 'public'}; origins:{' '}
          {experience.allowedOrigins.length === 0 ? 'any' : experience.allowedOrigins.join(', ')}
        </dd>
        <dt>Settings</dt>
        <dd>
          <JsonBlock value={experience.settings} />
        </dd>
        <dt>Actions</dt>
        <dd>{experience.actions.length === 0 ? 'none' : experience.actions.map(actionLabel).join(', ')}</dd>
        <dt>Fallback message</dt>
        <dd>{experience.fallbackMessage}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(experience.updatedAt)}</dd>
      </dl>
      <EmbedSnippet experience={experience} />
      {experience.instructions ? (
        <details>
          <summary>Instructions</summary>
          <pre class="content">{experience.instructions}</pre>
        </details>
      ) : null}
      {experience.actions.length > 0 ? (
        <details>
          <summary>Action templates</summary>
          <JsonBlock value={experience.actions} />
        </details>
      ) : null}
    </article>
  );
}

export function ExperiencesView() {
  const api = useApi();
  const experiences = useExperiences();
  const names = useNames('knowledge-bases:read', '/api/v2/knowledge-bases', 'knowledgeBases');
  return (
    <section aria-labelledby="experiences-title">
      <header class="section-header">
        <h2 id="experiences-title">Experiences</h2>
        {api.holds('experiences:write') ? (
          <a class="button primary" href="#/experiences/new">
            New experience
          </a>
        ) : null}
      </header>
      <LoadedView loaded={experiences}>
        {(data) =>
          data.experiences.length === 0 ? (
            <p class="muted">No experiences.</p>
          ) : (
            data.experiences.map((experience) => <ExperienceCard key={experience.id} experience={experience} knowledgeBaseNames={names} />)
          )
        }
      </LoadedView>
    </section>
  );
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A host page for the widget, as a site would embed it: one script tag. It runs in an iframe so
 * each experience gets a fresh widget and the widget cannot touch the console.
 */
function widgetPage(experience: Experience, token: string | undefined): string {
  const origin = window.location.origin;
  const attributes = [
    ['src', `${origin}/widget.js`],
    ['data-experience-id', experience.id],
    ['data-base-url', origin],
    ['data-title', experience.name],
    ['data-open', 'true'],
    ...(token ? [['data-token', token]] : []),
  ];
  const tag = `<script ${attributes.map(([name, value]) => `${name}="${escapeAttribute(value!)}"`).join(' ')} async></script>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Playground</title></head><body style="margin:0;font-family:system-ui,sans-serif;background:#f6f7f9">${tag}</body></html>`;
}

/** Embeds the chat widget for a chosen experience. */
export function PlaygroundView({ experienceId }: { experienceId: string | undefined }) {
  const api = useApi();
  // The choice list is read again on each choice: an experience created meanwhile shows up.
  const experiences = useExperiences([experienceId]);
  // Read on its own, so a deep link works for an experience created after the list was loaded.
  const experience = useData(
    async (signal) => (experienceId ? api.get<Experience>(`${experiencesPath}/${experienceId}`, {}, signal) : undefined),
    [experienceId],
  );
  const chosen = experience.data;
  // An experience that requires a token gets the console's own token, which must hold query:execute.
  const token = chosen?.requireAuth && api.holds('query:execute') ? api.session.token : undefined;
  return (
    <section aria-labelledby="playground-title">
      <h2 id="playground-title">Playground</h2>
      <LoadedView loaded={experiences}>
        {(data) => (
          <label>
            Experience{' '}
            <select name="experience" value={experienceId ?? ''} onChange={(event) => navigate('playground', event.currentTarget.value)}>
              <option value="" disabled>
                Choose an experience
              </option>
              {data.experiences.map((experience) => (
                <option key={experience.id} value={experience.id}>
                  {experience.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </LoadedView>
      <ErrorNotice error={experience.error} />
      {chosen ? (
        <>
          {chosen.requireAuth && !token ? (
            <div class="notice error" role="alert">
              This experience requires a token with <code>query:execute</code>, which your token lacks: the widget's questions will be refused.
            </div>
          ) : null}
          {chosen.allowedOrigins.length > 0 ? (
            <p class="muted">
              Queries are accepted only from {chosen.allowedOrigins.join(', ')}; the playground runs on {window.location.origin}.
            </p>
          ) : null}
          <iframe key={chosen.id} class="playground" title={`Chat widget for ${chosen.name}`} srcdoc={widgetPage(chosen, token)} />
        </>
      ) : null}
    </section>
  );
}
