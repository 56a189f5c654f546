/** The widget's settings, read from the `data-*` attributes of its script tag. */
export type Theme = 'light' | 'dark' | 'auto';

export type WidgetOptions = {
  /** `data-experience-id` (required): the experience questions go to. */
  experienceId: string;
  /** `data-base-url`: where the lore API is; defaults to the origin the script was loaded from. */
  baseUrl: string;
  /** `data-title`: the panel's heading. */
  title: string;
  /** `data-placeholder`: the question field's placeholder. */
  placeholder: string;
  /** `data-theme`: light, dark, or auto (follows the visitor's system setting; the default). */
  theme: Theme;
  /** `data-accent-color`: any CSS color for the launcher, the visitor's messages and links. */
  accentColor: string | undefined;
  /** `data-open="true"`: the panel starts open. */
  open: boolean;
  /** `data-token`: an access token with `query:execute`, for experiences that require one. */
  token: string | undefined;
  /** `data-user-id`: the visitor's id in the host site, sent with each question. */
  userId: string | undefined;
};

const themes: readonly Theme[] = ['light', 'dark', 'auto'];

/** A non-empty attribute value, else undefined. */
function present(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** Reads the options of a script tag (`data-*`), resolving the base URL against the page. */
export function optionsFromDataset(dataset: DOMStringMap, scriptSrc: string): WidgetOptions {
  const base = present(dataset.baseUrl) ?? new URL(scriptSrc || '/', location.href).origin;
  const theme = present(dataset.theme) as Theme | undefined;
  const accent = present(dataset.accentColor);
  return {
    experienceId: present(dataset.experienceId) ?? '',
    baseUrl: base.replace(/\/+$/, ''),
    title: present(dataset.title) ?? 'Ask a question',
    placeholder: present(dataset.placeholder) ?? 'Type your question…',
    theme: theme && themes.includes(theme) ? theme : 'auto',
    // An invalid color would silently fall back to nothing; keep the default accent instead.
    accentColor: accent && CSS.supports('color', accent) ? accent : undefined,
    open: dataset.open === 'true',
    token: present(dataset.token),
    userId: present(dataset.userId),
  };
}
