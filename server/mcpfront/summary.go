package mcpfront

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memrank/memrank/client"
)

// The tools' descriptions: what a model reads to decide when to call
// which.
const (
	rememberDoc = `Store one thing worth remembering about the user or their world, as a short self-contained statement ("Dana lives in Lisbon", "Prefers tea to coffee"). memrank decides what it is: a new memory, a restatement of one it already has, an independent re-observation (raises its confidence), a contradiction of a stored memory (the less trusted claim is superseded), or rejected (grounding not_supported). Say how you know it (source: direct when the user said it) and pass the conversation's session_id, so that evidence from separate conversations counts; when several people talk, say who said it (speaker), so that their statements stay apart. Returns the decision, the memory's id and its confidence.`
	recallDoc   = `Search the memories by meaning. memrank re-ranks what is similar to the query by how much to trust it (confidence, freshness, use), folds duplicates together and leaves out low-confidence guesses, unless one is the best match (then it is flagged below_gate). Age never removes a memory from an answer; it only lowers it a little, more so when the question is about recent things. Each memory comes with its id (for confirm, correct and forget), its text, final score, confidence (0 to 1), freshness, tier, and why it ranks where it does. Give at (an RFC 3339 time) to ask what was known at that time. Prefer memories marked relevant; treat low-confidence and below_gate ones as uncertain and do not state memories with render false as facts.`
	confirmDoc  = `Record that the user confirmed a memory is true. Its source becomes at least confirmed and it counts one more observation, so its confidence rises; a conversation confirms a memory once (give its session_id), so confirming again from the same one changes no count. Use the id from recall or remember.`
	correctDoc  = `Record that the user corrected a memory: give the memory's id and the correct statement. The correction is stored (source direct by default) and the wrong memory is superseded, whatever its confidence: it is no longer recalled.`
	forgetDoc   = `Forget, when the user asks for it (right to erasure). With memory_id: delete that memory and the duplicates merged into it. With session_id: remove everything that conversation contributed, from every memory: memories only it supported are deleted, the others are recomputed as if it had never happened. Give exactly one of the two. Cannot be undone; forgetting again finds nothing and changes nothing.`
	statsDoc    = `Describe a memory collection: how many memories it holds, by confidence bucket (high, medium, low), tier and type, how many are archived or superseded, the average confidence, and the write decisions this server made in it.`
)

// outcomeSummary says in a sentence or two what the write path decided.
func outcomeSummary(o Outcome, coll string) string {
	var b strings.Builder
	switch o.Decision {
	case "inserted":
		fmt.Fprintf(&b, "Remembered as a new memory %s (confidence %.2f).", o.MemoryID, o.Confidence)
	case "restatement":
		fmt.Fprintf(&b, "Already remembered as memory %s: a restatement, not new evidence (confidence %.2f, %d independent observations).",
			o.MemoryID, o.Confidence, o.Observations)
	case "independent":
		fmt.Fprintf(&b, "Memory %s seen again independently: confidence now %.2f, %d independent observations.", o.MemoryID, o.Confidence, o.Observations)
	case "contradiction":
		fmt.Fprintf(&b, "This contradicts a stored memory. Stored as memory %s (confidence %.2f)", o.MemoryID, o.Confidence)
		if o.Superseded != "" {
			fmt.Fprintf(&b, "; memory %s, the less trusted claim, is superseded and no longer recalled", o.Superseded)
		}
		b.WriteString(".")
	case "rejected":
		fmt.Fprintf(&b, "Not stored: %s.", strings.TrimSuffix(orDefault(o.Reason, "rejected by the write path"), "."))
	case "confirmed":
		fmt.Fprintf(&b, "Memory %s confirmed: confidence now %.2f, %d independent observations.", o.MemoryID, o.Confidence, o.Observations)
	case "corrected":
		fmt.Fprintf(&b, "Corrected: the correction is memory %s (confidence %.2f)", o.MemoryID, o.Confidence)
		if o.Superseded != "" {
			fmt.Fprintf(&b, "; memory %s is superseded and no longer recalled", o.Superseded)
		}
		b.WriteString(".")
	default:
		fmt.Fprintf(&b, "%s: memory %s (confidence %.2f).", o.Decision, o.MemoryID, o.Confidence)
	}
	if len(o.Merged) > 0 {
		fmt.Fprintf(&b, " Duplicates merged into it: %s.", strings.Join(o.Merged, ", "))
	}
	if o.Reason != "" && o.Decision != "rejected" {
		fmt.Fprintf(&b, " Note: %s.", strings.TrimSuffix(o.Reason, "."))
	}
	if o.Replayed {
		b.WriteString(" (This observation_id was seen before: this is the first decision, and nothing changed.)")
	}
	if o.CreatedCollection {
		fmt.Fprintf(&b, " Created the collection %s.", coll)
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, " Warning: %s.", strings.TrimSuffix(w, "."))
	}
	return b.String()
}

// recallSummary lists the memories for a model: each one's text, score,
// confidence, freshness, tier and why; the time asked as of, why an
// answer is empty, and what was left out.
func recallSummary(out RecallOutput) string {
	var b strings.Builder
	asOf := ""
	if out.At != "" {
		asOf = " as of " + out.At
	}
	switch {
	case len(out.Memories) == 0 && out.Empty != "":
		fmt.Fprintf(&b, "No memories found for %q in %s%s: %s.", out.Query, out.Collection, asOf, strings.TrimSuffix(out.Empty, "."))
	case len(out.Memories) == 0:
		fmt.Fprintf(&b, "No memories found for %q in %s%s.", out.Query, out.Collection, asOf)
	case !out.Reranked:
		fmt.Fprintf(&b, "%s is not served as a memory collection (%s): %d results in the store's own order, not scored by memrank:",
			out.Collection, orDefault(out.PassThrough, "passed through"), len(out.Memories))
	default:
		fmt.Fprintf(&b, "%d %s for %q in %s%s, best first:", len(out.Memories), plural(len(out.Memories), "memory", "memories"), out.Query, out.Collection, asOf)
	}
	for i, m := range out.Memories {
		gate := ""
		if m.BelowGate {
			gate = " | below the confidence gate: uncertain"
		}
		fmt.Fprintf(&b, "\n%d. %s\n   id %s | score %.3f | confidence %s | freshness %s | tier %s%s\n   why: %s",
			i+1, orDefault(m.Text, "(no text)"), m.ID, m.Score, num(m.Confidence), num(m.Freshness), orDefault(m.Tier, "-"), gate, m.Why)
	}
	if len(out.LeftOut) > 0 {
		b.WriteString("\nLeft out: ")
		for i, reason := range slices.Sorted(maps.Keys(out.LeftOut)) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d %s", out.LeftOut[reason], leftOutWords(reason))
		}
		b.WriteString(".")
	}
	return b.String()
}

// why is one line on why a result ranks where it does: the relevance
// guard, the confidence and render gates, folded duplicates, evidence.
// nonePassed says that no result passed the confidence gate (the gate's
// fallback), as opposed to one best match below it.
func why(r client.Result, reranked, nonePassed bool) string {
	if !reranked {
		return "the store's similarity: memrank did not re-rank this collection"
	}
	var parts []string
	if r.Confidence == nil {
		parts = append(parts, "not a scored memory: ranked by similarity and freshness")
	}
	if r.Guard != nil {
		switch *r.Guard {
		case "relevant":
			parts = append(parts, "relevant: as similar to the query as the best match")
		case "below_band":
			parts = append(parts, "less similar than the best match")
		case "below_floor":
			parts = append(parts, "barely similar to the query")
		}
	}
	switch {
	case r.BelowGate && nonePassed:
		parts = append(parts, "below the confidence gate: nothing passed it, so the best come back")
	case r.BelowGate:
		parts = append(parts, "below the confidence gate: the best match, and nothing passing the gate was as close")
	case r.Confidence != nil:
		parts = append(parts, "passed the confidence gate")
	}
	if !r.Render {
		parts = append(parts, "too uncertain to state as a fact")
	}
	if e := r.Explanation; e != nil && !e.Unscored {
		parts = append(parts, fmt.Sprintf("%d independent %s", e.Observations, plural(e.Observations, "observation", "observations")))
	}
	if r.FreshnessFactor != nil && *r.FreshnessFactor < 0.995 {
		parts = append(parts, fmt.Sprintf("age took %.0f%% off its weight", 100*(1-*r.FreshnessFactor)))
	}
	if r.AccessCount != nil && *r.AccessCount > 0 {
		parts = append(parts, fmt.Sprintf("recalled %d %s before", *r.AccessCount, plural(int(*r.AccessCount), "time", "times")))
	}
	if n := len(r.FoldedIDs); n > 0 {
		how := ""
		if r.Dedup != nil {
			how = " (" + dedupWords(*r.Dedup) + ")"
		}
		parts = append(parts, fmt.Sprintf("%d %s folded into it%s", n, plural(n, "duplicate", "duplicates"), how))
	}
	if r.Archived != "" {
		parts = append(parts, "out of answers ("+r.Archived+"), returned because include_archived asked")
	}
	return strings.Join(parts, "; ")
}

func dedupWords(tier string) string {
	switch tier {
	case "text_hash":
		return "same text"
	case "vector":
		return "near-identical meaning"
	case "judge_cache":
		return "judged the same fact"
	}
	return tier
}

func leftOutWords(reason string) string {
	switch reason {
	case "below_gate":
		return "below the confidence gate"
	case "folded":
		return "folded into another result"
	case "superseded":
		return "superseded"
	case "not_retrievable":
		return "not retrievable"
	case "archived":
		return "archived by a person or a review"
	}
	return reason
}

// forgetSummary says what forgetting changed.
func forgetSummary(o ForgetOutput) string {
	if o.MemoriesUpdated == 0 && o.MemoriesDeleted == 0 && o.AuditRedacted == 0 && o.AuditDeleted == 0 && o.AuditKept == 0 {
		return fmt.Sprintf("Nothing to forget: no memory in %s holds %s %s (or it was forgotten already).", o.Collection, o.Forgot, o.ID)
	}
	return fmt.Sprintf("Forgot %s %s in %s: %d %s deleted, %d updated; %d audit records redacted, %d deleted, %d kept (policy %s).",
		o.Forgot, o.ID, o.Collection, o.MemoriesDeleted, plural(o.MemoriesDeleted, "memory", "memories"), o.MemoriesUpdated,
		o.AuditRedacted, o.AuditDeleted, o.AuditKept, o.AuditPolicy)
}

// statsSummary describes a collection in a few lines.
func statsSummary(s StatsOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds %d %s (%d archived, %d superseded); average confidence %s.",
		s.Collection, s.Memories, plural(s.Memories, "memory", "memories"), s.Archived, s.Superseded, num(s.AverageConfidence))
	for _, part := range []struct {
		name string
		m    map[string]int
	}{{"by confidence", s.Buckets}, {"by tier", s.Tiers}, {"by type", s.Types}} {
		if len(part.m) > 0 {
			fmt.Fprintf(&b, "\n%s: %s", part.name, counts(part.m))
		}
	}
	if len(s.Decisions) > 0 {
		fmt.Fprintf(&b, "\nwrite decisions in %s since this server started: %s", s.Collection, counts(s.Decisions))
	}
	return b.String()
}

func counts[N int | int64](m map[string]N) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func num(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *f)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
