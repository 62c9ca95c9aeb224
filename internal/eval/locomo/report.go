package locomo

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memrank/memrank/internal/eval/evalfmt"
)

// Report is everything an evaluation measured.
type Report struct {
	File      string       `json:"file"`
	At        time.Time    `json:"at"`
	RealDates bool         `json:"real_dates"`
	Embedder  EmbedderInfo `json:"embedder"`
	Limit     int          `json:"limit"`
	Turns     int          `json:"turns"`
	Questions int          `json:"questions"`
	Skipped   Skipped      `json:"skipped"`
	// DroppedEvidence are the evidence ids that name no turn.
	DroppedEvidence []DroppedEvidence  `json:"dropped_evidence"`
	Conversations   []ConversationInfo `json:"conversations"`
	Systems         []System           `json:"systems"`
	Groups          []Group            `json:"groups"`
	Subsets         []Subset           `json:"subsets"`
	// Rows has one row per group, subset and system, in that order.
	Rows        []Row            `json:"rows"`
	PerQuestion []QuestionResult `json:"per_question"`
	Notes       []string         `json:"notes"`
	// Mode is how the turns became memories: "direct" (each written to the
	// store as a memory of its own) or "write_path" (observed through
	// memrank's write path, which may fold a turn into another memory).
	Mode string `json:"mode"`
	// LoadSeconds is the wall time of writing every turn (through the
	// write path: observing them and copying the collections).
	LoadSeconds float64 `json:"load_seconds"`
	// WritePath is what the write path made of the turns, by group; null
	// when they were written directly.
	WritePath *WritePathReport `json:"write_path"`
}

// The modes.
const (
	ModeDirect    = "direct"
	ModeWritePath = "write_path"
)

// WritePathReport is what the write path made of the turns.
type WritePathReport struct {
	// Speaker: each observation named its turn's speaker.
	Speaker bool `json:"speaker"`
	// Copy says how the QuerySuffix copies were made.
	Copy   string       `json:"copy"`
	Groups []WriteGroup `json:"groups"`
}

// WriteGroup is the write path's numbers over a group's conversations.
type WriteGroup struct {
	Group string `json:"group"`
	WriteStats
}

// copyNote is WritePathReport.Copy.
const copyNote = "observed once, into each conversation's " + RetrieveSuffix + " copy; its points (vectors and payloads) and its " +
	"audit companion's were then copied to the " + QuerySuffix + " copy (scroll and upsert, the embedder record naming its own " +
	"collection), so that both copies hold the same memories"

// EmbedderInfo names the embedder.
type EmbedderInfo struct {
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
}

// ConversationInfo describes one conversation as loaded.
type ConversationInfo struct {
	SampleID     string    `json:"sample_id"`
	Dev          bool      `json:"dev"`
	Collections  []string  `json:"collections"`
	Sessions     int       `json:"sessions"`
	Turns        int       `json:"turns"`
	Questions    int       `json:"questions"`
	FirstSession time.Time `json:"first_session"` // as stored (shifted)
	LastSession  time.Time `json:"last_session"`
	ShiftSeconds int64     `json:"shift_seconds"` // added to the file's dates
	// WritePath is what the write path made of its turns (absent when
	// they were written directly).
	WritePath *WriteStats `json:"write_path,omitempty"`
}

// Group is a set of conversations the rows average over.
type Group struct {
	Name          string   `json:"name"` // all, dev, held_out
	Label         string   `json:"label"`
	Conversations []string `json:"conversations"`
}

// Subset is a set of questions the rows average over.
type Subset struct {
	Name  string `json:"name"` // all, multi_hop, temporal, open_domain, single_hop, recent
	Label string `json:"label"`
}

// Row is one system's numbers over a group's subset of questions. The
// means are null when the subset has no question.
type Row struct {
	Group     string    `json:"group"`
	Subset    string    `json:"subset"`
	System    string    `json:"system"`
	Questions int       `json:"questions"`
	R5        jsonFloat `json:"r_at_5"`
	R10       jsonFloat `json:"r_at_10"`
	R25       jsonFloat `json:"r_at_25"`
	Hit10     jsonFloat `json:"hit_at_10"`
	MRR       jsonFloat `json:"mrr"`
	Empty     int       `json:"empty"`
	// R10VsRaw is R@10 minus raw's on the same questions (null for raw).
	R10VsRaw jsonFloat `json:"r_at_10_vs_raw"`
}

// QuestionResult is one question's answers, by system name.
type QuestionResult struct {
	SampleID     string            `json:"sample_id"`
	Question     int               `json:"question"` // index in the sample's qa (0-based)
	Category     int               `json:"category"`
	CategoryName string            `json:"category_name"`
	Recent       bool              `json:"recent"`
	Text         string            `json:"text"`
	Evidence     []string          `json:"evidence"`
	Systems      map[string]Answer `json:"systems"`
}

// Answer is one system's answer to a question.
type Answer struct {
	Scores `json:"-"`
	// FirstHit is the rank of the first result covering an evidence turn
	// (null: none within the limit).
	FirstHit *int `json:"first_hit"`
	// Top10 are the turn ids each of the first 10 results covers, and
	// Top10IDs their point ids.
	Top10    [][]string `json:"top_10_turn_ids"`
	Top10IDs []string   `json:"top_10_ids"`
}

// MarshalJSON writes the scores with the answer.
func (a Answer) MarshalJSON() ([]byte, error) {
	type plain Answer
	return json.Marshal(struct {
		R5       float64 `json:"r_at_5"`
		R10      float64 `json:"r_at_10"`
		R25      float64 `json:"r_at_25"`
		Hit10    float64 `json:"hit_at_10"`
		MRR      float64 `json:"mrr"`
		Returned int     `json:"returned"`
		plain
	}{a.R5, a.R10, a.R25, a.Hit10, a.MRR, a.Returned, plain(a)})
}

func newAnswer(evidence []string, hits []Hit) Answer {
	for i := range hits {
		for j, id := range hits[i].TurnIDs {
			hits[i].TurnIDs[j] = TurnOf(id)
		}
	}
	a := Answer{Scores: Score(evidence, hits), Top10: [][]string{}, Top10IDs: []string{}}
	if a.Scores.FirstHit > 0 {
		a.FirstHit = &a.Scores.FirstHit
	}
	for _, h := range hits[:min(len(hits), 10)] {
		ids := h.TurnIDs
		if ids == nil {
			ids = []string{}
		}
		a.Top10 = append(a.Top10, ids)
		a.Top10IDs = append(a.Top10IDs, h.ID)
	}
	return a
}

// jsonFloat is a float64 written as null when it is not a number.
type jsonFloat = evalfmt.Float

// groups are the report's conversation groups.
func groups(b *Bench) []Group {
	out := []Group{
		{Name: "all", Label: "all " + evalfmt.Plural(len(b.Conversations), "conversation", "conversations")},
		{Name: "dev", Label: "dev"},
		{Name: "held_out", Label: "held out"},
	}
	for i := range b.Conversations {
		c := &b.Conversations[i]
		out[0].Conversations = append(out[0].Conversations, c.SampleID)
		if c.Dev {
			out[1].Conversations = append(out[1].Conversations, c.SampleID)
		} else {
			out[2].Conversations = append(out[2].Conversations, c.SampleID)
		}
	}
	for i := range out {
		if out[i].Conversations == nil {
			out[i].Conversations = []string{}
		}
		if i > 0 {
			out[i].Label = fmt.Sprintf("%s (%d: %s)", out[i].Label, len(out[i].Conversations), strings.Join(out[i].Conversations, ", "))
		}
	}
	return out
}

// subsets are the report's question subsets, each with its test.
func subsets() ([]Subset, []func(*QuestionResult) bool) {
	s := []Subset{{"all", "all"}}
	keep := []func(*QuestionResult) bool{func(*QuestionResult) bool { return true }}
	for _, c := range []int{MultiHop, Temporal, OpenDomain, SingleHop} {
		s = append(s, Subset{strings.ReplaceAll(CategoryName(c), "-", "_"), CategoryName(c)})
		keep = append(keep, func(q *QuestionResult) bool { return q.Category == c })
	}
	s = append(s, Subset{"recent", fmt.Sprintf("recent (%dd)", int(RecentWindow/(24*time.Hour)))})
	keep = append(keep, func(q *QuestionResult) bool { return q.Recent })
	return s, keep
}

func newReport(cfg Config, answers []QuestionResult, writes []*WriteStats, loading time.Duration) *Report {
	b := cfg.Bench
	r := &Report{
		File: cfg.File, At: b.At, RealDates: b.RealDates, Limit: Limit, Mode: ModeDirect, LoadSeconds: loading.Seconds(),
		Embedder:        EmbedderInfo{Model: cfg.Embedder.Model(), Dimensions: cfg.Embedder.Dimensions()},
		Turns:           b.Turns(),
		Questions:       len(answers),
		Skipped:         b.Skipped,
		DroppedEvidence: b.Dropped,
		Systems:         Systems(),
		Groups:          groups(b),
		PerQuestion:     answers,
		Notes:           cfg.Notes,
	}
	if r.DroppedEvidence == nil {
		r.DroppedEvidence = []DroppedEvidence{}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
	for i := range b.Conversations {
		c := &b.Conversations[i]
		r.Conversations = append(r.Conversations, ConversationInfo{
			SampleID: c.SampleID, Dev: c.Dev,
			Collections: []string{c.Collection() + RetrieveSuffix, c.Collection() + QuerySuffix},
			Sessions:    c.Sessions, Turns: len(c.Points), Questions: len(c.Questions),
			FirstSession: c.First, LastSession: c.Last, ShiftSeconds: int64(c.Shift / time.Second),
		})
		if writes != nil {
			r.Conversations[i].WritePath = writes[i]
		}
	}
	if writes != nil {
		r.Mode = ModeWritePath
		r.WritePath = &WritePathReport{Speaker: cfg.Speaker, Copy: copyNote}
		for _, g := range r.Groups {
			wg := WriteGroup{Group: g.Name, WriteStats: *newWriteStats()}
			for i := range b.Conversations {
				if slices.Contains(g.Conversations, b.Conversations[i].SampleID) {
					wg.add(writes[i])
				}
			}
			r.WritePath.Groups = append(r.WritePath.Groups, wg)
		}
	}
	subs, keep := subsets()
	r.Subsets = subs
	for _, g := range r.Groups {
		for si, sub := range subs {
			var rawR10 float64
			for _, sys := range r.Systems {
				var scores []Scores
				for qi := range answers {
					q := &answers[qi]
					if slices.Contains(g.Conversations, q.SampleID) && keep[si](q) {
						scores = append(scores, q.Systems[sys.Name].Scores)
					}
				}
				s := Summarize(scores)
				row := Row{
					Group: g.Name, Subset: sub.Name, System: sys.Name, Questions: s.Questions,
					R5: jsonFloat(s.R5), R10: jsonFloat(s.R10), R25: jsonFloat(s.R25), Hit10: jsonFloat(s.Hit10), MRR: jsonFloat(s.MRR),
					Empty: s.Empty, R10VsRaw: jsonFloat(math.NaN()),
				}
				if sys.Name == SystemRaw {
					rawR10 = s.R10
				} else {
					row.R10VsRaw = jsonFloat(s.R10 - rawR10)
				}
				r.Rows = append(r.Rows, row)
			}
		}
	}
	return r
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

func f3(f jsonFloat) string { return evalfmt.F3(float64(f)) }

func signed(f jsonFloat) string {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return ""
	}
	return fmt.Sprintf("%+.3f", float64(f))
}

// WriteTable writes the report as aligned text: a header, then a table
// per group of conversations with questions.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "LoCoMo %s: %s, %s, %s (categories 1-4 with evidence); skipped: %d adversarial, %d without evidence",
		r.File, evalfmt.Plural(len(r.Conversations), "conversation", "conversations"), evalfmt.Plural(r.Turns, "turn", "turns"),
		evalfmt.Plural(r.Questions, "question", "questions"), r.Skipped.Adversarial, r.Skipped.NoEvidence)
	if n := len(r.DroppedEvidence); n > 0 {
		fmt.Fprintf(w, "; %d evidence ids name no turn (dropped)", n)
	}
	fmt.Fprintln(w)
	dates := fmt.Sprintf("dates shifted (each conversation's latest session at %s)", r.At.Add(-LastSessionAge).Format(time.RFC3339))
	if r.RealDates {
		first, last := time.Time{}, time.Time{}
		for i, c := range r.Conversations {
			if i == 0 || c.FirstSession.Before(first) {
				first = c.FirstSession
			}
			if i == 0 || c.LastSession.After(last) {
				last = c.LastSession
			}
		}
		dates = fmt.Sprintf("real dates (%s to %s)", first.Format(time.DateOnly), last.Format(time.DateOnly))
	}
	embedder := r.Embedder.Model
	if !strings.HasSuffix(embedder, ":"+strconv.Itoa(r.Embedder.Dimensions)) {
		embedder += fmt.Sprintf(" (%d dimensions)", r.Embedder.Dimensions)
	}
	fmt.Fprintf(w, "at %s, %s; embedder %s; limit %d\n", r.At.Format(time.RFC3339), dates, embedder, r.Limit)
	var sys []string
	labels := make(map[string]string, len(r.Systems))
	for _, s := range r.Systems {
		sys = append(sys, s.Label+" = "+s.Description)
		labels[s.Name] = s.Label
	}
	fmt.Fprintf(w, "systems: %s\n", strings.Join(sys, "; "))
	fmt.Fprintln(w, r.modeLine())
	subLabels := make(map[string]string, len(r.Subsets))
	for _, s := range r.Subsets {
		subLabels[s.Name] = s.Label
	}
	for _, g := range r.Groups {
		var rows []Row
		for _, row := range r.Rows {
			if row.Group == g.Name {
				rows = append(rows, row)
			}
		}
		if len(rows) == 0 || rows[0].Questions == 0 {
			continue // no conversation of the group was asked
		}
		fmt.Fprintf(w, "\n%s\n", g.Label)
		if r.WritePath != nil {
			for _, wg := range r.WritePath.Groups {
				if wg.Group == g.Name {
					fmt.Fprintln(w, writeLine(&wg.WriteStats))
				}
			}
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "subset\tsystem\tquestions\tR@5\tR@10\tR@25\thit@10\tMRR\tempty\tR@10 vs raw")
		for i, row := range rows {
			sub := subLabels[row.Subset]
			if i > 0 && rows[i-1].Subset == row.Subset {
				sub = ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", sub, labels[row.System], row.Questions,
				f3(row.R5), f3(row.R10), f3(row.R25), f3(row.Hit10), f3(row.MRR), row.Empty, signed(row.R10VsRaw))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// modeLine says how the turns became memories, and how long it took.
func (r *Report) modeLine() string {
	took := (time.Duration(r.LoadSeconds * float64(time.Second))).Round(100 * time.Millisecond)
	if r.WritePath == nil {
		return fmt.Sprintf("memories: each turn written to the store as a memory of its own, in %s", took)
	}
	speaker := "without its speaker"
	if r.WritePath.Speaker {
		speaker = "with its speaker"
	}
	return fmt.Sprintf("memories: each turn observed through memrank's write path (POST /v1/observe, in conversation order, %s), "+
		"which may fold it into another memory; in %s with the copies", speaker, took)
}

// decisionOrder is the order decisions are listed in.
var decisionOrder = []string{"inserted", "restatement", "independent", "contradiction", "corrected", "confirmed", "rejected"}

// writeLine is a group's write-path numbers in a line.
func writeLine(ws *WriteStats) string {
	kinds := slices.Sorted(maps.Keys(ws.Decisions))
	slices.SortStableFunc(kinds, func(a, b string) int {
		ia, ib := slices.Index(decisionOrder, a), slices.Index(decisionOrder, b)
		if ia < 0 {
			ia = len(decisionOrder)
		}
		if ib < 0 {
			ib = len(decisionOrder)
		}
		return ia - ib
	})
	var dec []string
	for _, k := range kinds {
		dec = append(dec, fmt.Sprintf("%s %d", k, ws.Decisions[k]))
	}
	var tiers []string
	for _, k := range slices.Sorted(maps.Keys(ws.DedupTiers)) {
		tiers = append(tiers, fmt.Sprintf("tier %s %d", k, ws.DedupTiers[k]))
	}
	if len(tiers) == 0 {
		tiers = []string{"none"}
	}
	return fmt.Sprintf("write path: %s (%s; matches: %s); %s (%d superseded); folds %d (turns in another memory), "+
		"cross-speaker folds %d (memories of several speakers' turns), evidence folds %d (evidence turns in another memory)",
		evalfmt.Plural(ws.Observations, "observation", "observations"), strings.Join(dec, ", "), strings.Join(tiers, ", "),
		evalfmt.Plural(ws.Memories, "memory", "memories"), ws.Superseded, ws.Folds, ws.CrossSpeakerFolds, ws.EvidenceFolds)
}
