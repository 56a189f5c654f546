// The package ships no types; lore uses only its `gfm` plugin (tables, strikethrough, task lists).
declare module '@joplin/turndown-plugin-gfm' {
  import type TurndownService from 'turndown';
  export const gfm: TurndownService.Plugin;
}
