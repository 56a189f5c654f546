/**
 * What every database session starts with (see Db.vectorSearchDefaults): pgvector's iterative HNSW
 * scan in relaxed order and this ef_search. 75 is the depth of the query path's hybrid search with
 * its default topK (5 sources × 3 chunks × 5 candidates each); deeper searches set theirs in a
 * transaction.
 */
export const VECTOR_SEARCH_DEFAULTS = { efSearch: 75 };

/** The same settings as SQL, for a session that is already open (PGlite's one). */
export const VECTOR_SEARCH_SETTINGS = `SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = ${VECTOR_SEARCH_DEFAULTS.efSearch}`;
