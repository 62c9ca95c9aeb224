// Package explaintable prints a /v1/retrieve answer as `memrank explain`
// shows it: a table with every factor behind every score.
package explaintable

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/server/native"
)

// Write prints r: how the collection was served, the time it was asked
// as of, the relevance guard and the query's focus, then one row per
// result with every factor of its weight (WEIGHT = BASE x FRESH_F x BOOST
// x CONF_F), each result's problems, why an answer is empty, and the
// candidates left out. textKey is the payload key of a memory's text
// (payload_keys.text), shown cut to a glance.
func Write(w io.Writer, r *native.RetrieveResponse, textKey string) error {
	fmt.Fprintf(w, "mode %s: %s\n", r.Mode, r.Detection)
	if !r.Reranked {
		fmt.Fprintf(w, "not re-ranked (%s): weights are Qdrant's scores\n", r.PassThrough)
	}
	if e := r.Embedder; e != nil {
		if e.SameThreshold != nil && e.JudgeThreshold != nil {
			fmt.Fprintf(w, "embedder %s: the write path merges at a similarity of %s or more, asks the judge from %s\n",
				e.Model, num(*e.SameThreshold, 2), num(*e.JudgeThreshold, 2))
		} else {
			fmt.Fprintf(w, "embedder %s: the write path uses the configured bands\n", e.Model)
		}
	}
	if r.At != "" {
		fmt.Fprintf(w, "as of %s: freshness and tiers then, memories first observed later left out, later supersessions not applied; access counts and confidence are today's\n", r.At)
	}
	if g := r.Guard; g != nil {
		// Every result is ordered by its weight; the guard says which
		// returned results count as read. The counts are the returned
		// results'.
		switch {
		case !g.Applied:
			fmt.Fprintf(w, "relevance guard off (%s): every result counted as read; %d folded; focus %s; ordered by weight\n",
				g.From, g.Folded, num(g.Focus, 2))
		case g.Relative:
			fmt.Fprintf(w, "relevance guard (%s): relevant when the score is at least %s (the best, %s, less %s of it): %d relevant, %d beyond, %d folded; focus %s; ordered by weight\n",
				g.From, num(g.Cutoff, 4), num(g.Best, 4), num(g.RelativeBand, 2), g.Relevant, g.Beyond, g.Folded, num(g.Focus, 2))
		default:
			fmt.Fprintf(w, "relevance guard (%s): relevant when the similarity is at least %s (the best, %s, less %s; floor %s): %d relevant, %d beyond, %d folded; focus %s; ordered by weight\n",
				g.From, num(g.Cutoff, 4), num(g.Best, 4), num(g.Band, 2), num(g.Floor, 2), g.Relevant, g.Beyond, g.Folded, num(g.Focus, 2))
		}
		if x := firstExplanation(r.Result); x != nil {
			fmt.Fprintf(w, "weight = base x fresh_f x boost x conf_f, where fresh_f = 1 - %s x focus x (1 - f) and boost = 1 + %s x r(access)\n",
				num(x.FreshnessWeight, 2), num(x.AccessWeight, 2))
		}
	}
	if sh := r.Shadow; sh != nil {
		fmt.Fprintf(w, "shadow: memrank would answer %v (overlap %s, first result changed: %s)\n", sh.Memrank, num(sh.Overlap, 2), yesNo(sh.TopChanged))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tID\tGUARD\tWEIGHT\t= BASE\tx FRESH_F\tx BOOST\tx CONF_F\tF\tCONF\tS\tN\tR(N)\tE\tT\tGROUND\tAGE_D\tHALF_D\tACCESS\tGATE\tRENDER\tTIER\tFOLDED\tTEXT")
	for i, res := range r.Result {
		x := res.Explanation
		confF := "-"
		if x != nil {
			confF = num(x.ConfidenceFactor, 3)
		}
		conf, s, n, rn, ex, t, ground := "-", "-", "-", "-", "-", "-", "-"
		age, half := "-", "-"
		if x != nil {
			age, half = num(x.AgeDays, 1), num(x.HalfLife, 0)
			if !x.Unscored {
				conf, s, n, rn = num(x.Confidence, 3), num(x.Source, 2), strconv.Itoa(x.Observations), num(x.Repetition, 3)
				ex, t, ground = num(x.Extractor, 2), num(x.Type, 2), x.Grounding
				if x.GroundingPenalty != 0 {
					ground += "(-" + num(x.GroundingPenalty, 2) + ")"
				}
			} else {
				conf = "unscored"
			}
		}
		gate := "pass"
		if res.BelowGate {
			gate = "below"
		} else if res.Confidence == nil {
			gate = "never"
		}
		folded := make([]string, len(res.FoldedIDs))
		for j, id := range res.FoldedIDs {
			folded[j] = id.String()
		}
		foldedText := "-"
		if len(folded) > 0 {
			foldedText = strings.Join(folded, ",")
			if res.Dedup != nil {
				foldedText += " (" + *res.Dedup + ")"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			i+1, res.ID, optStr(res.Guard), num(res.Weight, 4), num(res.BaseScore, 4), optNum(res.FreshnessFactor, 3), optNum(res.AccessBoost, 3), confF,
			optNum(res.Freshness, 3), conf, s, n, rn, ex, t, ground, age, half, optInt(res.AccessCount), gate, yesNo(res.Render),
			tier(res), foldedText, payloadText(res.Payload, textKey, 48))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range r.Result {
		if res.BelowGate {
			fmt.Fprintf(w, "%s: below the confidence gate, returned as the best match (nothing passing the gate was near it)\n", res.ID)
		}
		if res.Archived != "" {
			fmt.Fprintf(w, "%s: out of answers (%s), returned because include_archived asked for it\n", res.ID, res.Archived)
		}
		for _, p := range res.Problems {
			fmt.Fprintf(w, "%s: problem: %s\n", res.ID, p)
		}
	}
	if r.Empty != "" {
		fmt.Fprintf(w, "no results: %s\n", r.Empty)
	}
	writeDropped(w, r.Dropped)
	return nil
}

// firstExplanation is the first result's explanation, which holds the
// weight's parameters (the same for every result); nil when none is
// explained.
func firstExplanation(results []native.Result) *native.Explanation {
	for i := range results {
		if x := results[i].Explanation; x != nil {
			return x
		}
	}
	return nil
}

// tier is the tier as of the answer's clock, with the stored one (the
// last consolidation's) when they differ.
func tier(res native.Result) string {
	t := optStr(res.Tier)
	if res.StoredTier != nil && res.Tier != nil && *res.StoredTier != *res.Tier {
		t += " (stored " + *res.StoredTier + ")"
	}
	return t
}

type droppedReason struct{ reason, gloss string }

// droppedReasons are the reasons a candidate is left out, in the order the
// footer lists them, with a gloss; a reason not listed here follows them.
var droppedReasons = []droppedReason{
	{"superseded", "replaced by a correction or a contradiction"},
	{"not_retrievable", "stored as not retrievable"},
	{"archived", "archived by a person or a review"},
	{"below_gate", "below the confidence gate"},
	{"folded", "duplicates of a result"},
}

// writeDropped is the footer of what the answer left out, by reason.
func writeDropped(w io.Writer, dropped []native.DroppedCandidate) {
	if len(dropped) == 0 {
		return
	}
	byReason := map[string][]string{}
	var others []string
	for _, d := range dropped {
		if _, ok := byReason[d.Reason]; !ok && !slices.ContainsFunc(droppedReasons, func(k droppedReason) bool { return k.reason == d.Reason }) {
			others = append(others, d.Reason)
		}
		s := d.ID.String()
		if d.Into != nil {
			s += " into " + d.Into.String()
		}
		byReason[d.Reason] = append(byReason[d.Reason], s)
	}
	fmt.Fprintf(w, "left out: %d candidates\n", len(dropped))
	for _, k := range droppedReasons {
		if ids := byReason[k.reason]; len(ids) > 0 {
			fmt.Fprintf(w, "  %s (%d, %s): %s\n", k.reason, len(ids), k.gloss, strings.Join(ids, ", "))
		}
	}
	for _, r := range others {
		fmt.Fprintf(w, "  %s (%d): %s\n", r, len(byReason[r]), strings.Join(byReason[r], ", "))
	}
}

func num(f native.Float, prec int) string {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func optNum(f *native.Float, prec int) string {
	if f == nil {
		return "-"
	}
	return num(*f, prec)
}

func optInt(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}

func optStr(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// payloadText is the payload's text, cut to n runes, for a glance at what
// the result is; "-" when there is none.
func payloadText(raw json.RawMessage, key string, n int) string {
	if len(raw) == 0 {
		return "-"
	}
	v, err := qdrantjson.Parse(string(raw))
	if err != nil || v.Kind != qdrantjson.KindObject {
		return "-"
	}
	var text string
	for _, m := range v.Members {
		if m.Key == key && m.Val.Kind == qdrantjson.KindString {
			text = m.Val.Text
		}
	}
	t := strings.Join(strings.Fields(text), " ")
	if t == "" {
		return "-"
	}
	if utf8.RuneCountInString(t) > n {
		r := []rune(t)
		t = string(r[:n-1]) + "…"
	}
	return t
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
