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

// Options say how Write lays an answer out.
type Options struct {
	// TextKey is the payload key of a memory's text (payload_keys.text),
	// shown cut to a glance.
	TextKey string
	// Width is the widest line Write prints, in columns; 0 is no limit.
	// The table then leaves out its least telling columns, one at a time
	// (the confidence's components first, the weight and the text never),
	// until it fits, cuts the text to the room left, and says which
	// columns it left out; the lines around it are wrapped at spaces.
	Width int
}

// Write prints r: how the collection was served, the time it was asked
// as of, the relevance guard and the query's focus, then one row per
// result with every factor of its weight (WEIGHT = BASE x FRESH_F x BOOST
// x CONF_F), each result's problems, why an answer is empty, and the
// candidates left out.
func Write(w io.Writer, r *native.RetrieveResponse, o Options) error {
	p := &printer{w: w, width: o.Width}
	p.linef("mode %s: %s", r.Mode, r.Detection)
	if !r.Reranked {
		p.linef("not re-ranked (%s): weights are Qdrant's scores", r.PassThrough)
	}
	if e := r.Embedder; e != nil {
		if e.SameThreshold != nil && e.JudgeThreshold != nil {
			p.linef("embedder %s: the write path merges at a similarity of %s or more, asks the judge from %s",
				e.Model, num(*e.SameThreshold, 2), num(*e.JudgeThreshold, 2))
		} else {
			p.linef("embedder %s: the write path uses the configured bands", e.Model)
		}
	}
	if r.At != "" {
		p.linef("as of %s: freshness and tiers then, memories first observed later left out, later supersessions not applied; access counts and confidence are today's", r.At)
	}
	if g := r.Guard; g != nil {
		// Every result is ordered by its weight; the guard says which
		// returned results count as read. The counts are the returned
		// results'.
		switch {
		case !g.Applied:
			p.linef("relevance guard off (%s): every result counted as read; %d folded; focus %s; ordered by weight",
				g.From, g.Folded, num(g.Focus, 2))
		case g.Relative:
			p.linef("relevance guard (%s): relevant when the score is at least %s (the best, %s, less %s of it): %d relevant, %d beyond, %d folded; focus %s; ordered by weight",
				g.From, num(g.Cutoff, 4), num(g.Best, 4), num(g.RelativeBand, 2), g.Relevant, g.Beyond, g.Folded, num(g.Focus, 2))
		default:
			p.linef("relevance guard (%s): relevant when the similarity is at least %s (the best, %s, less %s; floor %s): %d relevant, %d beyond, %d folded; focus %s; ordered by weight",
				g.From, num(g.Cutoff, 4), num(g.Best, 4), num(g.Band, 2), num(g.Floor, 2), g.Relevant, g.Beyond, g.Folded, num(g.Focus, 2))
		}
		if x := firstExplanation(r.Result); x != nil {
			p.linef("weight = base x fresh_f x boost x conf_f, where fresh_f = 1 - %s x focus x (1 - f) and boost = 1 + %s x r(access)",
				num(x.FreshnessWeight, 2), num(x.AccessWeight, 2))
		}
	}
	if sh := r.Shadow; sh != nil {
		p.linef("shadow: memrank would answer %v (overlap %s, first result changed: %s)", sh.Memrank, num(sh.Overlap, 2), yesNo(sh.TopChanged))
	}
	cols, left := fit(columns(r.Result, o.TextKey), o.Width)
	p.table(cols)
	if len(left) > 0 {
		p.linef("%d columns left out for the width (%s): --wide shows them", len(left), strings.Join(left, ", "))
	}
	for _, res := range r.Result {
		if res.BelowGate {
			p.linef("%s: below the confidence gate, returned as the best match (nothing passing the gate was near it)", res.ID)
		}
		if res.Archived != "" {
			p.linef("%s: out of answers (%s), returned because include_archived asked for it", res.ID, res.Archived)
		}
		for _, pr := range res.Problems {
			p.linef("%s: problem: %s", res.ID, pr)
		}
	}
	if r.Empty != "" {
		p.linef("no results: %s", r.Empty)
	}
	writeDropped(p, r.Dropped)
	return p.err
}

// column is one column of the table: its heading, its cells and how
// telling it is (0 most: never left out).
type column struct {
	head  string
	rank  int
	cells []string
}

// factorRank is the rank of the weight's four factors, which are left out
// together: a product shown in part would not add up to the weight.
const factorRank = 3

// textRoom is the least room the text column is cut to before other
// columns are left out for it.
const textRoom = 16

// columns are the table's columns for results, in their order.
func columns(results []native.Result, textKey string) []*column {
	// Ranks: what the weight is and which memory it is first, then the
	// weight's factors, then what they are made of.
	cols := []*column{
		{head: "#"}, {head: "ID"}, {head: "GUARD", rank: 2}, {head: "WEIGHT"}, {head: "= BASE", rank: factorRank},
		{head: "x FRESH_F", rank: factorRank}, {head: "x BOOST", rank: factorRank}, {head: "x CONF_F", rank: factorRank},
		{head: "F", rank: 4}, {head: "CONF", rank: 4}, {head: "S", rank: 7}, {head: "N", rank: 7}, {head: "R(N)", rank: 7},
		{head: "E", rank: 7}, {head: "T", rank: 7}, {head: "GROUND", rank: 6}, {head: "AGE_D", rank: 4}, {head: "HALF_D", rank: 6},
		{head: "ACCESS", rank: 4}, {head: "GATE", rank: 2}, {head: "RENDER", rank: 6}, {head: "TIER", rank: 2},
		{head: "FOLDED", rank: 5}, {head: "TEXT"},
	}
	for i, res := range results {
		for j, cell := range row(i, res, textKey) {
			cols[j].cells = append(cols[j].cells, cell)
		}
	}
	return cols
}

// row is one result's cells, in the columns' order.
func row(i int, res native.Result, textKey string) []string {
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
	return []string{strconv.Itoa(i + 1), res.ID.String(), optStr(res.Guard), num(res.Weight, 4), num(res.BaseScore, 4),
		optNum(res.FreshnessFactor, 3), optNum(res.AccessBoost, 3), confF,
		optNum(res.Freshness, 3), conf, s, n, rn, ex, t, ground, age, half, optInt(res.AccessCount), gate, yesNo(res.Render),
		tier(res), foldedText, payloadText(res.Payload, textKey, 48)}
}

// fit is cols without the columns that do not fit in width, left out
// least telling and rightmost first (the factors together), with the text cut to the room left
// (textRoom at least); left are the headings it left out, in the table's
// order. A width of 0 keeps everything.
func fit(cols []*column, width int) (kept []*column, left []string) {
	if width <= 0 {
		return cols, nil
	}
	text := cols[len(cols)-1]
	out := make([]bool, len(cols))
	// need is the width of the columns kept, the text cut to textRoom.
	need := func() int {
		total := -gap
		for i, c := range cols {
			if !out[i] {
				w := c.width()
				if c == text {
					w = min(w, textRoom)
				}
				total += w + gap
			}
		}
		return total
	}
	for need() > width {
		worst := -1
		for i, c := range cols {
			if !out[i] && c.rank > 0 && (worst < 0 || c.rank >= cols[worst].rank) {
				worst = i
			}
		}
		if worst < 0 {
			break // only the columns never left out: the line is wider
		}
		out[worst] = true
		if cols[worst].rank == factorRank {
			for i, c := range cols {
				out[i] = out[i] || c.rank == factorRank
			}
		}
	}
	room := max(width-need()+min(text.width(), textRoom), textRoom)
	for i, cell := range text.cells {
		text.cells[i] = cut(cell, room)
	}
	for i, c := range cols {
		if out[i] {
			left = append(left, strings.TrimLeft(c.head, "=x "))
		} else {
			kept = append(kept, c)
		}
	}
	return kept, left
}

// gap is the space between two columns.
const gap = 2

// width is the column's width: its widest cell or heading, in runes.
func (c *column) width() int {
	w := utf8.RuneCountInString(c.head)
	for _, cell := range c.cells {
		w = max(w, utf8.RuneCountInString(cell))
	}
	return w
}

// printer writes lines, wrapped at spaces to width when it is not 0, and
// keeps the first write error.
type printer struct {
	w     io.Writer
	width int
	err   error
}

// linef prints one line. A line wider than the width is broken at the
// last space that fits; the lines it continues on are indented two spaces
// more than it. A word wider than the width stays whole.
func (p *printer) linef(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	indent := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " "))+2)
	for p.width > 0 && utf8.RuneCountInString(line) > p.width {
		r := []rune(line)
		at := strings.LastIndexByte(string(r[:p.width+1]), ' ')
		if at <= len(indent) {
			break
		}
		p.write(strings.TrimRight(line[:at], " ") + "\n")
		line = indent + strings.TrimLeft(line[at:], " ")
	}
	p.write(line + "\n")
}

func (p *printer) write(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s)
	}
}

// table prints cols, aligned, with their headings.
func (p *printer) table(cols []*column) {
	if p.err != nil {
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, gap, ' ', 0)
	line := make([]string, len(cols))
	for i, c := range cols {
		line[i] = c.head
	}
	fmt.Fprintln(tw, strings.Join(line, "\t"))
	for r := range cols[0].cells {
		for i, c := range cols {
			line[i] = c.cells[r]
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	p.err = tw.Flush()
}

// cut is s cut to n runes, an ellipsis ending what was cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
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
func writeDropped(p *printer, dropped []native.DroppedCandidate) {
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
	p.linef("left out: %d candidates", len(dropped))
	for _, k := range droppedReasons {
		if ids := byReason[k.reason]; len(ids) > 0 {
			p.linef("  %s (%d, %s): %s", k.reason, len(ids), k.gloss, strings.Join(ids, ", "))
		}
	}
	for _, r := range others {
		p.linef("  %s (%d): %s", r, len(byReason[r]), strings.Join(byReason[r], ", "))
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
	return cut(t, n)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
