// The package ships no types; lore uses only its English list.
declare module 'stopword' {
  export const eng: string[];
}
