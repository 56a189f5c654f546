/**
 * A `Float32Array` statement parameter is bound as a pgvector `vector` in its binary form
 * (`vector_recv`: the dimension and an unused word as int16, then each float4, all big-endian)
 * rather than as text. The statement must cast the parameter to `vector` (`$3::vector(512)`), so
 * that the database reads it with vector's receive function.
 *
 * Why: a 512-dimension question vector as text is about 10,600 characters of floats. PGlite parsed
 * it in 0.9-1.1 ms of its thread (strtof in WebAssembly; the same statement with the vector bound
 * as binary: 0.18-0.30 ms against 1.17-1.29, `SELECT $1::vector(512) IS NULL`), and a question
 * binds it twice (the vector search, and the cosine of the chunks returned). Formatting it as text
 * cost the thread that serves HTTP 0.12 ms (Array.prototype.join of the floats).
 */
export function vectorBytes(vector: Float32Array): Uint8Array {
  const bytes = new Uint8Array(4 + 4 * vector.length);
  const view = new DataView(bytes.buffer);
  view.setInt16(0, vector.length);
  for (let index = 0; index < vector.length; index += 1) view.setFloat32(4 + 4 * index, vector[index]!);
  return bytes;
}
