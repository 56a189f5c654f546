/**
 * The widget's CSS, inside its shadow root: host-page selectors cannot reach in, and `:host`
 * resets what would otherwise be inherited from the page (fonts, colors, line height). Sizes are
 * in px, never rem, which follows the host page's root font size.
 */
export const styles = `
:host { all: initial !important; }
*, *::before, *::after { box-sizing: border-box; }
.root {
  --accent: #2563eb; --accent-fg: #fff; --bg: #fff; --fg: #1f2328; --muted: #59636e; --border: #d1d9e0;
  --bubble: #f1f3f5; --error: #b42318; --error-bg: #fef3f2; --shadow: 0 12px 32px rgba(0, 0, 0, .18);
  font: 400 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); letter-spacing: normal; text-align: left; -webkit-font-smoothing: antialiased;
}
.root.dark {
  --bg: #161b22; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --bubble: #21262d;
  --error: #ffa198; --error-bg: #3c1618; --shadow: 0 12px 32px rgba(0, 0, 0, .5);
}
@media (prefers-color-scheme: dark) {
  .root.auto {
    --bg: #161b22; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --bubble: #21262d;
    --error: #ffa198; --error-bg: #3c1618; --shadow: 0 12px 32px rgba(0, 0, 0, .5);
  }
}
button, textarea { font: inherit; color: inherit; margin: 0; }
button { cursor: pointer; border: 0; background: none; padding: 0; }
button:disabled { cursor: default; opacity: .55; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.launcher {
  position: fixed; right: 16px; bottom: 16px; z-index: 2147483646; width: 56px; height: 56px; border-radius: 50%;
  background: var(--accent); color: var(--accent-fg); box-shadow: var(--shadow); display: grid; place-items: center;
}
.launcher svg { width: 26px; height: 26px; }
.panel {
  position: fixed; right: 16px; bottom: 84px; z-index: 2147483647; width: 380px; height: 600px;
  max-width: calc(100vw - 16px); max-height: calc(100vh - 100px); display: flex; flex-direction: column;
  background: var(--bg); border: 1px solid var(--border); border-radius: 12px; box-shadow: var(--shadow); overflow: hidden;
}
.panel[hidden] { display: none; }
/* Phones: the panel covers the screen down to the on-screen keyboard (viewport.ts sets the variables). */
@media (max-width: 480px) {
  .panel {
    top: var(--viewport-top, 0px); right: 0; bottom: auto; left: 0; width: 100%; height: var(--viewport-height, 100%);
    max-width: none; max-height: none; border: 0; border-radius: 0;
  }
  .launcher { right: 12px; bottom: 12px; }
  .root.open .launcher { display: none; }
}
.header { display: flex; align-items: center; gap: 4px; padding: 10px 10px 10px 16px; border-bottom: 1px solid var(--border); }
.header h2 { flex: 1; min-width: 0; overflow-wrap: anywhere; margin: 0; font-size: 16px; font-weight: 600; line-height: 1.3; }
.icon-button { display: grid; place-items: center; width: 32px; height: 32px; border-radius: 6px; color: var(--muted); }
.icon-button:hover { background: var(--bubble); color: var(--fg); }
.icon-button svg { width: 18px; height: 18px; }
.log { flex: 1; overflow-y: auto; padding: 16px; display: flex; flex-direction: column; gap: 12px; }
.empty { margin: auto 0; color: var(--muted); text-align: center; }
.message { max-width: 88%; padding: 8px 12px; border-radius: 12px; overflow-wrap: anywhere; }
.user { align-self: flex-end; background: var(--accent); color: var(--accent-fg); white-space: pre-wrap; border-bottom-right-radius: 4px; }
.assistant { align-self: flex-start; background: var(--bubble); border-bottom-left-radius: 4px; }
.assistant.failed .error { margin: 0; }
/* The avatar sits in the margin left of each assistant message. */
.with-avatar .assistant { position: relative; margin-left: 36px; max-width: calc(88% - 36px); }
.avatar { position: absolute; left: -36px; bottom: 0; width: 28px; height: 28px; border-radius: 50%; object-fit: cover; background: var(--bubble); }
.assistant.failed .avatar { display: none; }
.greeting { white-space: pre-wrap; }
.starters { margin-top: 0; }
.markdown img { display: block; max-width: 100%; max-height: 240px; height: auto; margin: 4px 0; border-radius: 6px; }
/* In the header: visible at all times, a long label cut to one line (in full on hover). */
.header .handover { flex: none; max-width: 45%; padding: 4px 10px; margin-right: 4px; font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; display: block; }
.assistant.failed { align-self: stretch; max-width: none; padding: 0; background: none; }
.markdown > :first-child { margin-top: 0; }
.markdown > :last-child { margin-bottom: 0; }
.markdown p, .markdown ul, .markdown ol, .markdown pre, .markdown blockquote { margin: 0 0 8px; }
.markdown ul, .markdown ol { padding-left: 20px; }
.markdown a { color: var(--accent); text-decoration: underline; }
.sources a { color: var(--accent); text-decoration: none; }
.root.dark .markdown a, .root.dark .sources a { color: #58a6ff; }
.markdown pre { overflow-x: auto; padding: 8px; border-radius: 6px; background: var(--bg); }
.markdown code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.markdown h1, .markdown h2, .markdown h3, .markdown h4 { margin: 8px 0 4px; font-size: 15px; line-height: 1.3; }
.markdown blockquote { padding-left: 8px; border-left: 3px solid var(--border); color: var(--muted); }
.typing { display: inline-flex; gap: 4px; padding: 4px 0; }
.markdown + .typing { margin-top: 4px; }
.typing span { width: 6px; height: 6px; border-radius: 50%; background: var(--muted); animation: blink 1.2s infinite; }
.typing span:nth-child(2) { animation-delay: .2s; }
.typing span:nth-child(3) { animation-delay: .4s; }
@keyframes blink { 0%, 80%, 100% { opacity: .25; } 40% { opacity: 1; } }
@media (prefers-reduced-motion: reduce) { .typing span { animation: none; } }
.error { margin: 6px 0 0; padding: 8px 12px; border-radius: 8px; color: var(--error); background: var(--error-bg); align-self: stretch; }
/* Cited sources: one compact row of numbered chips, each shortened to one line (its title on hover). */
.sources { display: flex; flex-wrap: wrap; gap: 4px 6px; margin: 8px 0 0; padding: 0; list-style: none; font-size: 12px; }
.sources li { display: inline-flex; align-items: center; gap: 4px; max-width: 100%; padding: 2px 8px 2px 2px; border: 1px solid var(--border); border-radius: 999px; background: var(--bg); }
.sources li > :last-child { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.source-number { display: grid; place-items: center; min-width: 18px; height: 18px; padding: 0 4px; border-radius: 999px; background: var(--bubble); color: var(--muted); font-size: 11px; font-weight: 600; }
.actions { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; }
.action { display: inline-flex; align-items: center; gap: 6px; padding: 6px 10px; border: 1px solid var(--accent); border-radius: 999px; color: var(--accent); background: var(--bg); font-size: 13px; }
.root.dark .action { color: var(--fg); }
.action img, .action svg { width: 16px; height: 16px; }
.feedback { display: flex; gap: 2px; margin-top: 6px; }
.feedback .icon-button { width: 28px; height: 28px; }
.feedback .icon-button[aria-pressed="true"] { color: var(--accent); background: var(--bg); }
.comment { display: flex; gap: 6px; align-items: flex-end; margin-top: 6px; }
/* The comment field grows with its text from two lines to six, then scrolls (a browser without field-sizing keeps two rows). */
.comment textarea {
  flex: 1; resize: none; field-sizing: content; min-height: 50px; max-height: 122px; padding: 6px 8px; border: 1px solid var(--border);
  border-radius: 6px; background: var(--bg); font-size: 13px; line-height: 18px;
}
.comment .send { height: 32px; padding: 0 10px; font-size: 13px; }
.thanks { margin: 6px 0 0; color: var(--muted); font-size: 12px; }
.composer { display: flex; gap: 8px; align-items: flex-end; padding: 10px; border-top: 1px solid var(--border); }
.composer textarea {
  flex: 1; resize: none; min-height: 40px; max-height: 120px; padding: 9px 12px; border: 1px solid var(--border);
  border-radius: 8px; background: var(--bg); line-height: 20px;
}
.send { height: 40px; padding: 0 14px; border-radius: 8px; background: var(--accent); color: var(--accent-fg); font-weight: 600; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;
