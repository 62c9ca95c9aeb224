// Package eval measures ranking quality on a labeled set: it asks a store
// (and memrank's rankers over it) every query of the set and scores the
// answers against the set's relevance labels. `memrank eval` is its
// command.
//
// # The labeled set
//
// A set is JSON Lines (gzip when the file name ends in .gz), each line one
// object with exactly one key. The first line is the header:
//
//	{"set": {"name": "...", "version": 1, "seed": 1, "now": "2026-11-24T00:00:00Z",
//	         "distance": "Cosine", "dim": 128, "embedder": "...", "notes": "..."}}
//
// now is the instant the queries are asked: every ranker runs with that
// clock, so results reproduce. Then memories and queries, in any order:
//
//	{"memory": {"id": 17, "vector": [...], "payload": {...}, "topic": "t042",
//	            "fact": "t042/v2", "correct": true, "role": "answer"}}
//	{"query": {"id": "q001", "vector": [...], "topic": "t042",
//	           "relevant": {"17": 3, "18": 1}, "limit": 10}}
//
// A memory's id is an unsigned 64-bit integer or a UUID string; its vector
// (or, without one, its text, embedded at load) goes into the store with
// its payload. topic is the unit of the train/test split; memories with the
// same fact state the same thing; correct says whether the memory's claim
// is true at now (used by the weight fit); role is descriptive. A query's
// relevant maps memory ids to grades 1..3 (every other memory is grade 0);
// its limit defaults to 10. Unknown keys, duplicate ids, vectors whose
// length is not the header's dim and relevant ids that are not memories of
// the set are errors naming the line (FILE:N: ...).
//
// # Metrics
//
// A ranking is the list of ids returned for a query (its top limit).
//
// Each memory's fact (its fact, else its own id) counts once: a result
// whose fact already appeared higher in the list has gain 0 and does not
// count as relevant again. A fact's grade for a query is the best grade of
// its memories (memories of one fact state the same thing).
//
//   - P@k is the number of distinct relevant facts (grade >= 1) in the top
//     k, divided by k (a list shorter than k still divides by k).
//   - nDCG@10 is DCG@10 / ideal DCG@10, with gain 2^grade - 1 at the first
//     position of each fact and a log2(i+1) discount at position i; the
//     ideal DCG orders the query's distinct relevant facts by their grade.
//   - MRR is 1 / the position of the first relevant result (0 if none).
//
// Averages are over the queries with at least one relevant memory; the
// report says how many queries were used and how many had none.
//
// An inversion is a pair (irrelevant i, relevant r), both facts, both
// listed, where i appears at a higher position than r. Each variant reports
// its total inversions; those where i is off-topic (the query has a topic
// and i's memory is not of it); "lifted": those where r's memory is more
// similar to the query than i's, so the ranking, not the similarity, put i
// above r (raw similarity order lifts none); and "withheld": the relevant
// facts the raw ranking lists and this one does not (excluded as
// superseded or decayed, gated, folded into another fact, or pushed out).
// The relevance guard must keep "lifted" at 0: freshness, confidence and
// access may re-order relevant memories, never lift an irrelevant one over
// a more similar relevant one. Similarities are computed from the set's
// vectors.
//
// # Variants
//
// raw is the store's own similarity order (the query sent straight to the
// store); memrank is the configured ranker (its guard and confidence
// weight, or the overrides given); guard off, confidence weight 0,
// confidence weight 1 and the seeds' formula (guard off, confidence weight
// 0) change one setting of it. A variant configured exactly like memrank
// is left out, and two variants configured alike share one row.
//
// # Split
//
// Topics are split 80/20 into train and test: the distinct topics (an item
// without a topic is its own unit, by its id) are ordered by a hash of the
// split seed and the topic, and the first fifth (rounded) are the test
// topics. Queries and memories follow their topic. The store always holds
// every memory; the split selects the queries scored and, for the weight
// fit, the memories whose pairs are counted.
//
// # Weight fit
//
// Fit chooses the confidence formula's four weights (source, repetition,
// extractor, type; each in [0, 1], summing to 1) that minimise the
// fraction of pairs (correct memory, incorrect memory) among the training
// memories carrying correct where the correct one's confidence is not
// higher: an exhaustive grid over the simplex in steps of 0.05, then steps
// of 0.01 within 0.05 of the best; ties go to the weights nearest the
// configured ones. Confidence is recomputed from each payload's source,
// observations, extractor, type and grounding with the scoring package's
// math.
package eval
