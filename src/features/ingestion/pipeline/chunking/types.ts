/**
 * The chunker's types that its modules share: chunk-content.ts returns chunks and packer.ts
 * reads the options, so both import them from here rather than one from the other (that was a
 * type-only import circle, issue 36).
 */

/** One chunk of a record's content. */
export type Chunk = {
  /** 0, 1, 2, ... in document order. */
  ordinal: number;
  /** Exactly `content.slice(start, end)`. */
  text: string;
  /** The Markdown headings above this chunk, outermost first (for `qa_pair`, ending with the question). */
  headingPath: string[];
  /** Offset of the chunk in the content, in UTF-16 code units as `String.prototype.slice` counts them. */
  start: number;
  /** Exclusive end offset. */
  end: number;
};

/** Chunk sizes in characters (UTF-16 code units). */
export type ChunkOptions = {
  /** Longest chunk, default 800; only an unsplittable unit (a table row, a `qa_pair` pair up to twice this) is longer. */
  chunkSize: number;
  /** Characters a chunk repeats from the end of the previous chunk of the same section, default 100; less than chunkSize. */
  chunkOverlap: number;
};
