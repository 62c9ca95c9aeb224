// Package locomo is a yardstick on the public LoCoMo benchmark (Maharana et
// al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL
// 2024): it stores every turn of LoCoMo's ten conversations as a memory,
// asks each question of categories 1-4 of the raw store and of memrank,
// and measures whether the turns the benchmark names as evidence come
// back. `memrank eval --locomo FILE` is its command.
//
// LoCoMo's data (locomo10.json) is licensed CC BY-NC and is not part of
// this repository; the tests use a small hand-written file in its format.
//
// # The file
//
// A JSON array of samples, each {"sample_id", "conversation", "qa"}:
// conversation holds speaker_a, speaker_b, and for each session N its
// turns session_N ([{"speaker", "dia_id", "text", "blip_caption"}]) and
// its date session_N_date_time ("1:56 pm on 8 May, 2023", read as UTC); a
// date without turns is ignored. qa lists {"question", "evidence" (turn
// ids), "category" 1..5}. Other keys are ignored.
//
// # The protocol
//
// Each conversation is one collection (Cosine, the embedder's vectors, an
// audit companion recording the embedder, so that memrank recognises it
// and applies that embedder's relevance guard). Each turn is one memory,
// written straight to the store: the text "Speaker: text" (plus
// " [shares image: CAPTION]" when the turn has a caption), a direct fact
// without stored confidence, created and last observed at its session's
// date, its session id ("session_3") and turn id ("D3:5"), retrievable and
// active; its point id is its 1-based position in the conversation.
//
// # Through the write path
//
// With Config.WritePath (`--write-path`), every turn is instead observed
// through memrank's write path, in conversation order: POST /v1/observe
// with the turn's text as above, source "direct", its session id, its turn
// id and its (shifted) time as observed_at, and with Config.Speaker
// (`--speaker`) its speaker. The write path creates the collection and
// its audit companion, and may fold a turn into an earlier memory (tier 1
// the same text, tier 2 similarity, tier 3 its judge), which then lists
// the turn among its turn_ids; it stores them qualified by the session
// ("session_3:D3:5"), read back as LoCoMo's (TurnOf). The turns are
// observed once, into the /v1/retrieve copy; its points (vectors and
// payloads) and its companion's are then copied to the qdrant query copy,
// with the same payload indexes and the embedder record naming the copy:
// both copies hold the same memories, which observing twice would give
// only if every decision were repeatable (a judge's need not be), at twice
// the cost. The report adds, per conversation and group: observations,
// decisions by kind, matches by dedup tier, the memories not superseded
// and the others; folds, the turns that are no memory of their own (each
// memory's turn_ids beyond its first, superseded memories left out);
// cross-speaker folds, the memories whose turns are more than one
// speaker's (with up to 20 examples); and evidence folds, the evidence
// turns of the questions asked that are a memory's but not its first.
//
// Dates are shifted per conversation so that its latest session lies
// exactly 24 hours before the evaluation's instant (at), the clock of
// every ranker; with real dates they are kept.
//
// Questions of categories 1 (multi-hop), 2 (temporal), 3 (open-domain) and
// 4 (single-hop) are asked; 5 (adversarial) is skipped. Evidence strings
// are split on [;,\s]+ ("D8:6; D9:17" names two turns), their numbers read
// as numbers ("D30:05" is D30:5); ids that name no
// turn of the conversation are dropped, and a question left with none is
// skipped.
//
// Every question is asked, in file order within its conversation, of
// three systems, each for 25 results: raw (the store's similarity order),
// /v1/retrieve (memrank's native API with the question's text) and qdrant
// query (Qdrant's REST query with the question's vector, through memrank).
// The two memrank systems count accesses as memrank does, each on its own
// copy of the collections, and the counts are flushed between two
// questions, so that each question sees the boosts earlier ones earned.
//
// # Metrics
//
// A result covers the turns its payload's turn_ids names. For a question
// with evidence turns E: R@k = |E covered by the top k| / |E| (k = 5, 10,
// 25); hit@10 is 1 when any of E is covered by the top 10; MRR is 1 / the
// rank of the first result covering one of E (0 if none in 25); empty
// counts the questions answered with no result. Averages are over the
// questions of a row, grouped by conversations (all ten, the dev five:
// conv-26, conv-30, conv-41, conv-42, conv-43, and the held-out five), by
// category, and "recent": the questions whose evidence turns all lie in
// sessions within the 30 days before at.
package locomo
