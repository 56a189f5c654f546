import { useState } from 'preact/hooks';

/** Copies `text`: the Clipboard API where the page may use it, else the selected text with the older copy command. */
async function copyText(text: string, element: HTMLElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!element) return false;
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    return document.execCommand('copy');
  }
}

/**
 * Text the operator copies (a signing secret, an embed tag) with a Copy button, and what to do
 * when the browser refuses: the text is then selected. `kind` is the code's class.
 */
export function CopyableText({ text, kind, what }: { text: string; kind: 'secret' | 'snippet'; what: string }) {
  const [copied, setCopied] = useState<boolean>();
  const [element, setElement] = useState<HTMLElement | null>(null);
  return (
    <>
      <p class="secret-row">
        <code class={kind} ref={setElement}>
          {text}
        </code>
        <button type="button" onClick={async () => setCopied(await copyText(text, element))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </p>
      {copied === false ? <p class="muted">The browser refused to copy: {what} is selected, copy it by hand.</p> : null}
    </>
  );
}
