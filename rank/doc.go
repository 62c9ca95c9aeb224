// Package rank is memrank's read path (docs/read-path.md): it turns a
// caller's Qdrant query into a larger candidate fetch, decodes the
// candidates as memories, drops what must not be returned, gates by
// confidence, weighs every candidate by weight = base x freshness factor x
// access boost x confidence factor, folds duplicates and orders the results
// by weight, with an explanation of every factor; and it counts the
// returned relevant memories as accessed through the Recorder.
//
// # Pipeline
//
// For a memory collection whose query can be re-ranked (nearest or
// recommend on a Cosine or Dot vector, sparse vectors, or a prefetch whose
// outer query is a fusion or a formula), Ranker.Query
//
//  1. asks the Source for (offset + limit) x Oversample candidates (at
//     least MinCandidates, 40 by default, capped by MaxCandidates, never
//     below offset + limit) from offset 0, with the whole payload, with the
//     vector tier 2 compares, and with the caller's score_threshold
//     (Qdrant's meaning: on the similarity); a query asked as of a time
//     (AsOf) also filters out the memories first observed after it;
//  2. decodes each payload (memory.Codec.DecodeRank) and scores it
//     (scoring.Params.Evaluate) at the answer's clock against its base
//     score: the similarity, negative ones keeping their sign, or Qdrant's
//     own score under a fusion or formula. Under AsOf, the supersessions
//     Config.History records after that time are taken back;
//  3. drops superseded memories and memories stored as not retrievable
//     (memory.Memory.Exclusion: archived by a person or a review, else
//     another writer's), and records them in Result.Dropped. Age never
//     excludes: the decay floor and the tier are labels;
//  4. applies the retrieval gate (scoring.Params.GateRetrieval; unscored
//     points are never gated) with its two fallbacks: when nothing passes,
//     every candidate comes back flagged below the gate; when the best
//     match is below the gate, reaches the render gate and the guard's
//     floor, and nothing that passes is within the guard's band of it, that
//     one comes back flagged;
//  5. measures the query's focus on recent memories (scoring.Params.Focus:
//     the mean freshness of the most similar candidates against that of a
//     larger pool) and sets every weight with it (scoring.Params.Refocus);
//  6. applies the relevance guard (guard.go): a candidate within a band of
//     the best similarity and above a floor is relevant. The guard orders
//     nothing; it decides which returned results are counted as read;
//  7. folds duplicates in weight order: tier 1 same text hash, tier 2
//     cosine >= SameThreshold between candidate vectors, tier 3 a cached
//     judge verdict "same" for pairs in [JudgeThreshold, SameThreshold).
//     Each group is shown by its most trusted member (the highest
//     confidence), in the place and with the score and guard decision of
//     its best member by weight; the others become its FoldedIDs;
//  8. orders the results by weight (then confidence, then point id),
//     returns each with its weight as its score, applies offset and limit,
//     runs the render gate over what is returned, re-applies the caller's
//     with_payload and with_vectors selectors, says why an answer with
//     candidates is empty (Result.Empty), and records every returned
//     relevant memory in the Recorder (never under AsOf).
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
