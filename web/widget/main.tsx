/**
 * The embeddable chat widget: `<script src="https://HOST/widget.js" data-experience-id="…" async>`
 * adds a launcher and a chat panel to the page, inside a shadow root so that neither the page's
 * CSS nor the widget's can reach the other. `window.LoreWidget.mount(options)` mounts one from code
 * (the operator console's playground does).
 */
import { render } from 'preact';
import { optionsFromDataset } from './options.ts';
import { styles } from './styles.ts';
import { Widget } from './widget.tsx';

/** A mounted widget; `unmount()` removes it from the page. */
export type MountedWidget = { host: HTMLElement; unmount(): void };

/** Mounts a widget with these options (the data-* names in camelCase, as in `script.dataset`). */
function mount(attributes: DOMStringMap, scriptSrc = ''): MountedWidget {
  const options = optionsFromDataset(attributes, scriptSrc);
  if (!options.experienceId) throw new Error('lore widget: data-experience-id is required');
  const host = document.createElement('lore-chat');
  host.dataset.experienceId = options.experienceId;
  const shadow = host.attachShadow({ mode: 'open' });
  const style = document.createElement('style');
  style.textContent = styles;
  const container = document.createElement('div');
  shadow.append(style, container);
  document.body.append(host);
  render(<Widget options={options} />, container);
  return {
    host,
    unmount() {
      render(null, container);
      host.remove();
    },
  };
}

declare global {
  interface Window {
    LoreWidget?: { mount(attributes: DOMStringMap): MountedWidget };
  }
}

window.LoreWidget = { mount: (attributes) => mount(attributes) };

// Only readable while this script runs for the first time, so it is taken before anything awaits.
const script = document.currentScript as HTMLScriptElement | null;
if (script?.dataset.experienceId) {
  const { dataset, src } = script;
  if (document.body) mount(dataset, src);
  else document.addEventListener('DOMContentLoaded', () => mount(dataset, src), { once: true });
} else if (script) {
  // Loaded for window.LoreWidget alone, or the attribute was forgotten: say which to do.
  console.warn('lore widget: nothing mounted; add data-experience-id="<experience id>" to the script tag or call window.LoreWidget.mount()');
}
