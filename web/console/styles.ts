/** The console's stylesheet, bundled into its script so the page is one HTML shell and one file. */
export const styles = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --bg: #f6f7f9; --card: #fff; --line: #d9dde5;
  --accent: #3156d3; --good: #1f8a4c; --bad: #c2362b; --warn: #a66a00; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ef; --muted: #98a2b3; --bg: #14171c; --card: #1d2128; --line: #343a45; --accent: #7c9cff; } }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); font-size: 14px; line-height: 1.45; }
a { color: var(--accent); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; font-size: 12px; }
h1, h2, h3 { margin: 0 0 12px; }
h2 { font-size: 20px; overflow-wrap: anywhere; } h3 { font-size: 16px; margin-top: 16px; }
button, .button { font: inherit; padding: 5px 12px; border: 1px solid var(--line); border-radius: 6px; background: var(--card);
  color: var(--fg); cursor: pointer; text-decoration: none; display: inline-block; }
button:disabled { opacity: .5; cursor: default; }
.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
.danger { color: var(--bad); border-color: var(--bad); }
input, select { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--fg); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.muted { color: var(--muted); }
.top { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: var(--card); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.top nav { display: flex; gap: 4px; flex: 1; flex-wrap: wrap; }
.top nav a { padding: 5px 10px; border-radius: 6px; text-decoration: none; color: var(--fg); }
.top nav a[aria-current="page"] { background: var(--accent); color: #fff; }
.who { color: var(--muted); }
.page { padding: 20px; max-width: 1280px; margin: 0 auto; }
.section-header { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 12px; }
.section-header h2, .section-header h3 { margin: 0 auto 0 0; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
.actions { display: inline-flex; gap: 6px; flex-wrap: wrap; margin-left: 6px; }
.actions button, .actions .button { white-space: nowrap; }
.progress-cell { min-width: 200px; }
.progress { display: flex; align-items: center; gap: 8px; min-width: 180px; }
.progress-track { flex: 1; height: 8px; border-radius: 4px; background: var(--line); overflow: hidden; }
.progress-fill { height: 100%; background: var(--accent); transition: width .4s ease; }
.progress-text { font-size: 12px; color: var(--muted); white-space: nowrap; font-variant-numeric: tabular-nums; min-width: 9.5em; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; background: var(--line); white-space: nowrap; }
.badge-completed, .badge-success, .badge-active, .badge-enabled, .badge-delivered { background: #d6f2e0; color: #135c32; }
.badge-failed { background: #fbdcd9; color: #8c2119; }
.badge-processing { background: #dbe4ff; color: #233f9c; }
.badge-pending, .badge-skipped { background: #fdeccc; color: #7a4e00; }
.badge-cancelled, .badge-deleted, .badge-disabled { background: #e4e7ec; color: #475467; }
.badge.outcome-warning { background: #ffe0c2; color: #8a3a00; }
.badge.outcome-error { background: #fbdcd9; color: #8c2119; }
.progress.outcome-warning .progress-fill { background: var(--warn); }
.progress.outcome-error .progress-fill { background: var(--bad); }
.counts .count { white-space: nowrap; }
.counts .bad { color: var(--bad); font-weight: 600; }
.result-failed td { background: color-mix(in srgb, var(--bad) 8%, transparent); }
.notice { padding: 10px 14px; border-radius: 8px; border: 1px solid var(--line); background: var(--card); margin: 10px 0; }
.notice.error { border-color: var(--bad); }
.notice.success { border-color: var(--good); }
.scope-missing { border-color: var(--warn); background: color-mix(in srgb, var(--warn) 10%, var(--card)); }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 6px 16px; margin: 0 0 12px; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px; margin-bottom: 16px; }
.json { background: var(--bg); padding: 8px; border-radius: 6px; }
.content { background: var(--card); border: 1px solid var(--line); padding: 12px; border-radius: 6px; max-height: 420px; overflow: auto; }
.chunks { padding-left: 0; list-style: none; } .chunk { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px; margin-bottom: 8px; }
.pager { display: flex; gap: 12px; align-items: center; margin-top: 12px; }
.filters { display: flex; gap: 8px; margin-bottom: 12px; flex-wrap: wrap; }
.upload { display: grid; gap: 12px; max-width: 560px; }
.upload label { display: grid; gap: 4px; }
.dropzone { border: 2px dashed var(--line); border-radius: 10px; padding: 24px; text-align: center; background: var(--card); }
.upload .dropzone label { display: inline-block; }
.dropzone label:focus-within { outline: 2px solid var(--accent); outline-offset: 2px; }
.dropzone.dragging { border-color: var(--accent); background: color-mix(in srgb, var(--accent) 8%, var(--card)); }
.file-list { list-style: none; padding: 0; margin: 12px 0 0; text-align: left; display: grid; gap: 6px; }
.file-list li { display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
.file-name { flex: 1; min-width: 0; overflow-wrap: anywhere; }
.file-names { display: block; font-size: 12px; color: var(--muted); overflow-wrap: anywhere; max-width: 24em; }
.eta { display: block; font-size: 12px; color: var(--muted); }
.webhook-form { display: grid; gap: 12px; max-width: 640px; }
.webhook-form > label { display: grid; gap: 4px; }
.webhook-form input:not([type="checkbox"]) { width: 100%; }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; margin: 0; display: flex; flex-wrap: wrap; gap: 6px 16px; }
legend { padding: 0 4px; }
.check { display: inline-flex; align-items: center; gap: 4px; }
.secret-panel { border-color: var(--warn); }
.secret-row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
.secret, .snippet { background: var(--bg); padding: 4px 8px; border-radius: 6px; overflow-wrap: anywhere; user-select: all; min-width: 0; }
.confirm { border-color: var(--bad); }
.url, .facts dd, table.stack td { overflow-wrap: anywhere; }
.webhook-actions { margin: 12px 0; }
.attempt-log summary { cursor: pointer; }
.attempt-log[open] { min-width: min(360px, 100%); }
.attempts { margin: 4px 0; padding-left: 18px; font-size: 12px; }
.webhook-actions > .actions { margin-left: 0; }
.edit-form { display: grid; gap: 12px; max-width: 720px; }
.field { display: grid; gap: 4px; min-width: 0; }
.field:has(> input[type="checkbox"]) { grid-template-columns: auto 1fr; align-items: center; }
.field:has(> input[type="checkbox"]) > label { order: 1; }
.field:has(> input[type="checkbox"]) > .hint, .field:has(> input[type="checkbox"]) > .field-errors { grid-column: 1 / -1; order: 2; }
.field-errors { display: grid; gap: 2px; }
.field input:not([type="checkbox"]), .field select, .field textarea { width: 100%; }
textarea { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--fg); resize: vertical; }
.hint { font-size: 12px; }
.field-error { color: var(--bad); font-size: 13px; overflow-wrap: anywhere; }
.field.invalid input, .field.invalid textarea, .field.invalid select { border-color: var(--bad); }
.field-row { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px; align-items: start; }
.form-group { border-top: 1px solid var(--line); padding-top: 10px; display: grid; gap: 12px; min-width: 0; }
.form-group h3 { margin: 0; }
.action-list { list-style: none; padding: 0; margin: 0 0 8px; display: grid; gap: 12px; }
.action-item fieldset { display: grid; gap: 10px; min-width: 0; }
.kb-picker .field-error { flex-basis: 100%; }
.tool-headers { display: grid; gap: 8px; min-width: 0; }
.header-row { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 8px; align-items: end; }
.header-row button { justify-self: start; }
.tool-test { border-top: 1px dashed var(--line); padding-top: 8px; display: grid; gap: 8px; min-width: 0; }
.tool-test h4 { margin: 4px 0 0; font-size: 13px; }
.tool-calls { margin: 6px 0; font-size: 13px; }
.tool-calls ol { margin: 4px 0; padding-left: 20px; }
.tool-call { margin: 4px 0 8px; }
.kb-admin { margin: 0 0 12px; }
.form-buttons { margin-left: 0; }
@media (max-width: 720px) {
  .page { padding: 12px; }
  .top { padding: 10px 12px; gap: 8px; }
  table.stack, table.stack tbody, table.stack tr { display: block; }
  table.stack thead { display: none; }
  table.stack tr { border-bottom: 1px solid var(--line); padding: 6px 0; }
  table.stack td { display: grid; grid-template-columns: 7.5em minmax(0, 1fr); gap: 8px; border: 0; padding: 3px 10px; min-width: 0; }
  table.stack .progress, table.stack .progress-cell { min-width: 0; }
  table.stack td::before { content: attr(data-label); color: var(--muted); font-size: 12px; }
  .facts { grid-template-columns: minmax(0, 1fr); gap: 0; }
  .facts dd { margin-bottom: 8px; }
}
.playground { width: 100%; height: 640px; border: 1px solid var(--line); border-radius: 10px; background: #fff; margin-top: 12px; }
.transcript { padding-left: 0; list-style: none; }
.message { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px; margin-bottom: 10px; }
.answer { white-space: pre-wrap; margin: 6px 0; }
.sources { margin: 6px 0; padding-left: 24px; font-size: 13px; }
.sign-in { display: grid; place-items: center; min-height: 100vh; }
.sign-in form { display: grid; gap: 12px; width: min(360px, 92vw); background: var(--card); padding: 24px; border: 1px solid var(--line); border-radius: 12px; }
.sign-in label { display: grid; gap: 4px; }
`;
