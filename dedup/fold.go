package dedup

import "github.com/memrank/memrank/memory"

// foldLoser folds a merged duplicate's fields into the memory it is merged
// into: the write path's merge and forgetting's replay of it both use it,
// so a replayed merge ends as the merge did. stronger says the loser's
// evidence scored higher: its names, levels, grounding and attribution
// win. Confidence and n (scoring's Merge), access counts, uses and
// supersession are the callers'.
func foldLoser(wm, lm *memory.Memory, stronger bool) {
	if stronger {
		wm.Source, wm.MemoryType, wm.Grounding = lm.Source, lm.MemoryType, lm.Grounding
		wm.ExtractorModel, wm.ExtractorLogprob, wm.HasLogprob = lm.ExtractorModel, lm.ExtractorLogprob, lm.HasLogprob
		wm.Levels.Source, wm.Levels.Type, wm.Levels.Extractor = lm.Levels.Source, lm.Levels.Type, lm.Levels.Extractor
		if lm.Attribution != "" {
			wm.Attribution = lm.Attribution
		}
	}
	wm.SessionIDs = union(wm.SessionIDs, lm.SessionIDs)
	wm.TurnIDs = union(wm.TurnIDs, lm.TurnIDs)
	wm.Entities = union(wm.Entities, lm.Entities)
	wm.Modalities = union(wm.Modalities, lm.Modalities)
	wm.Flags = union(wm.Flags, lm.Flags)
	if !lm.CreatedAt.IsZero() && (wm.CreatedAt.IsZero() || lm.CreatedAt.Before(wm.CreatedAt)) {
		wm.CreatedAt = lm.CreatedAt
	}
	if lm.LastObserved().After(wm.LastObservedAt) {
		wm.LastObservedAt = lm.LastObserved()
	}
	wm.Corroborations += lm.Corroborations
	wm.Contradictions += lm.Contradictions
}
