// Package rank is memrank's read path (docs/read-path.md): it turns a
// caller's Qdrant query into a larger candidate fetch, decodes the
// candidates as memories, folds duplicates, drops what must not be
// returned, gates by confidence and re-ranks by weight = base x freshness x
// access boost, with an explanation of every factor; and it counts the
// returned memories as accessed through the Recorder.
//
// # Pipeline
//
// For a memory collection whose query can be re-ranked (nearest or
// recommend on a Cosine or Dot vector, sparse vectors, or a prefetch whose
// outer query is a fusion or a formula), Ranker.Query
//
//  1. asks the Source for (offset + limit) x Oversample candidates (at
//     least MinCandidates, capped by MaxCandidates, never below offset +
//     limit) from offset 0, with the
//     whole payload, with the vector tier 2 compares, and with the
//     caller's score_threshold (Qdrant's meaning: on the similarity);
//  2. decodes each payload (memory.Codec.DecodeRank) and scores it
//     (scoring.Params.Evaluate) against its base score: the similarity,
//     negative ones keeping their sign, or Qdrant's own score under a
//     fusion or formula;
//  3. drops superseded, not retrievable and archived memories
//     (memory.Memory.Exclusion), and records them in Result.Dropped;
//  4. applies the retrieval gate with its fallback (scoring.GateRetrieval;
//     unscored points are never gated);
//  5. applies the relevance guard (guard.go): within a band of the best
//     similarity and above a floor, candidates are ordered by weight;
//     beyond it by similarity, after them;
//  6. folds duplicates in that order: tier 1 same text hash, tier 2
//     cosine >= SameThreshold between candidate vectors, tier 3 a cached
//     judge verdict "same" for pairs in [JudgeThreshold, SameThreshold). A
//     group is led by its first member in guard order; the others become
//     its FoldedIDs;
//  7. applies offset and limit, runs the render gate over what is
//     returned, re-applies the caller's with_payload and with_vectors
//     selectors, and records every returned relevant point in the
//     Recorder.
//
// Exclusions and the gate run before folding, though the original design
// listed folding first: a superseded memory (often a near-duplicate of the
// claim that replaced it: "likes dark mode" against "no longer likes dark
// mode") or a below-gate one must not lead a group and take its trusted
// duplicates down with it when it is then dropped.
//
// Everything else passes through un-reranked, with the caller's request
// sent unchanged in one upstream call: collections that are not memory
// collections, Euclid and Manhattan vectors, order_by, sample, scrolls (no
// query), discover, context, MMR and relevance feedback (their scores or
// order are not a similarity to re-weight), requests rank cannot reproduce
// exactly (a malformed payload selector, limit 0: the upstream answers with
// its own error), and collections whose configuration cannot be read.
// Result.PassThrough says why.
//
// # Access counts
//
// The Recorder implements docs/read-path.md's counting: every replica owns
// one key in each point's access_counts object and writes its absolute
// running total there, so retries are idempotent and replicas never write
// over each other. See Recorder.
//
// # Cost
//
// MeasureStages runs the CPU stages (payload decode, score + gate + sort,
// tier-2 folding) one at a time with the pipeline's own code; `memrank
// bench proxy` reports their cost per candidate from it, and the
// benchmarks time the same stages.
package rank
