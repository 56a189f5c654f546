/** A file lore cannot read (encrypted, damaged, no text, unknown type): its message becomes the record's `failed` result. */
export class DocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DocumentError';
  }
}
