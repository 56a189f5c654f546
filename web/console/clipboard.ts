/** Copies `text`: the Clipboard API where the page may use it, else the selected text with the older copy command. */
export async function copyText(text: string, element: HTMLElement | null): Promise<boolean> {
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
