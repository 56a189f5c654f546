// Types of doc-names.js, for the test that imports it.
export function docPages(root: string): string[];
export function repositoryPaths(root: string): Set<string>;
export function schemaNames(root: string): { table: Set<string>; function: Set<string>; trigger: Set<string> };
export function namedSchemaObjects(text: string): { kind: 'table' | 'function' | 'trigger'; name: string; index: number }[];
export function namedPaths(page: string, text: string): { name: string; index: number; from: 'root' | 'anywhere' | 'link' }[];
export function wrongNames(
  root: string,
  page: string,
  context?: { paths?: Set<string>; schema?: ReturnType<typeof schemaNames> },
): string[];
export function wrongDocNames(root: string): string[];
