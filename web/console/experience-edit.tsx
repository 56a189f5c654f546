/** The pages to create an experience and to edit or delete one (`#/experiences/new`, `#/experiences/ID`). */
import { useState } from 'preact/hooks';
import { EmbedSnippet } from './embed-snippet.tsx';
import { changedFields } from './form-fields.tsx';
import { ExperienceForm } from './experience-form.tsx';
import { experiencesPath } from './experiences.tsx';
import { navigate, useAction, useData } from './hooks.ts';
import type { Experience } from './types.ts';
import { BackLink, ConfirmButton, DetailPage, ErrorNotice, RequireScope, useApi } from './ui.tsx';

export function NewExperienceView() {
  const api = useApi();
  return (
    <section aria-labelledby="new-experience-title">
      <BackLink href="#/experiences" label="Experiences" />
      <h2 id="new-experience-title">New experience</h2>
      <RequireScope scope="experiences:write">
        <ExperienceForm
          label="Create experience"
          onCancel={() => navigate('experiences')}
          onSave={async (body) => {
            // A blank fallback message on creation means lore's default, which the API sets when it is absent.
            const { fallbackMessage, ...rest } = body;
            const created = await api.request<Experience>('POST', experiencesPath, { json: fallbackMessage ? body : rest });
            navigate('experiences', created.id);
          }}
        />
      </RequireScope>
    </section>
  );
}

/** One experience: its embed code, the form to change it (sending only what changed) and Delete. */
export function ExperienceView({ experienceId }: { experienceId: string }) {
  const api = useApi();
  const path = `${experiencesPath}/${experienceId}`;
  const loaded = useData((signal) => api.get<Experience>(path, {}, signal), [experienceId]);
  const [saved, setSaved] = useState(false);
  const removal = useAction();
  const canWrite = api.holds('experiences:write');
  return (
    <DetailPage kind="Experience" id={experienceId} back={['#/experiences', 'Experiences']} loaded={loaded}>
      {(experience) => (
        <>
          <p class="section-header">
            <strong class="experience-name">{experience.name}</strong>
            <a class="button" href={`#/playground/${experience.id}`}>
              Try in playground
            </a>
          </p>
          <h3>Embed code</h3>
          <EmbedSnippet experience={experience} />
          {saved ? (
            <p class="notice success" role="status">
              Saved.
            </p>
          ) : null}
          {canWrite ? (
            <>
              <ExperienceForm
                key={experience.updatedAt}
                experience={experience}
                label="Save"
                onCancel={() => navigate('experiences')}
                onSave={async (body) => {
                  setSaved(false);
                  const changes = changedFields(body, experience);
                  if (Object.keys(changes).length > 0) await api.request('PATCH', path, { json: changes });
                  setSaved(true);
                  loaded.refresh();
                }}
              />
              <h3>Delete</h3>
              <ConfirmButton
                label="Delete experience"
                question={`Delete ${experience.name}? Its widget stops answering at once; its sessions stay readable. This cannot be undone.`}
                confirm="Delete"
                disabled={removal.busy}
                onConfirm={() =>
                  void removal.run(async () => {
                    await api.request('DELETE', path);
                    navigate('experiences');
                  })
                }
              />
              <ErrorNotice error={removal.error} />
            </>
          ) : (
            <p class="muted">Changing an experience needs the scope experiences:write.</p>
          )}
        </>
      )}
    </DetailPage>
  );
}
