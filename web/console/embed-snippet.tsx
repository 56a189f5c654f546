/** The one-line script tag a site pastes to embed an experience's widget (docs/widget.md), with Copy. */
import { CopyableText } from './clipboard.tsx';
import type { Experience } from './types.ts';

/** The tag for this console's own origin, which serves widget.js and the API the widget calls. */
export function embedSnippet(experienceId: string, origin = window.location.origin): string {
  return `<script src="${origin}/widget.js" data-experience-id="${experienceId}" async></script>`;
}

export function EmbedSnippet({ experience }: { experience: Experience }) {
  const snippet = embedSnippet(experience.id);
  return (
    <div class="embed" role="region" aria-label={`Embed code for ${experience.name}`}>
      <CopyableText text={snippet} kind="snippet" what="the code" />
      {experience.requireAuth ? (
        <p class="notice">
          This experience requires a token: add <code>data-token="…"</code> with a short-lived access token holding <code>query:execute</code>,
          minted for each visitor on your server (anyone who can read the page can read it).
        </p>
      ) : null}
      {experience.allowedOrigins.length > 0 ? <p class="muted">Answers only on pages of {experience.allowedOrigins.join(', ')}.</p> : null}
    </div>
  );
}
