package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/memrank/memrank/dedup"
)

// Summary is what an import did.
type Summary struct {
	File         string         `json:"file"`
	ResumedAfter int            `json:"resumed_after"` // the line the import continued after (0: from the start)
	LastLine     int            `json:"last_line"`     // the last acknowledged line
	Lines        int            `json:"lines"`         // lines read by this run, blank ones included
	Applied      int            `json:"applied"`       // lines the write path decided on (valid ones, with Check)
	Skipped      int            `json:"skipped"`       // blank lines
	Failed       int            `json:"failed"`        // lines reported and skipped
	Decisions    map[string]int `json:"decisions"`
	// Replayed counts lines whose observation_id had been seen: the earlier
	// decision came back and nothing changed. They are not in Decisions.
	Replayed int    `json:"replayed"`
	Stopped  bool   `json:"stopped"` // the write path failed; a resume continues
	Check    bool   `json:"check,omitempty"`
	State    string `json:"state,omitempty"`
}

// WriteJSON prints s as one indented JSON object.
func (s Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText prints s as a line of counts, then the decisions one a line.
func (s Summary) WriteText(w io.Writer) error {
	verb := "imported"
	switch {
	case s.Check:
		verb = "checked"
	case s.Stopped:
		verb = "stopped importing"
	}
	from := ""
	if s.ResumedAfter > 0 {
		from = fmt.Sprintf(" after line %d", s.ResumedAfter)
	}
	applied := "applied"
	if s.Check {
		applied = "valid"
	}
	fmt.Fprintf(w, "%s %s%s: %d lines read, %d %s, %d skipped (blank), %d failed; last line %d\n",
		verb, s.File, from, s.Lines, s.Applied, applied, s.Skipped, s.Failed, s.LastLine)
	if len(s.Decisions) == 0 && s.Replayed == 0 {
		return nil
	}
	// Decisions in the write path's order, any others after them.
	order := []string{string(dedup.DecisionInserted), string(dedup.DecisionRestatement), string(dedup.DecisionIndependent),
		string(dedup.DecisionContradiction), string(dedup.DecisionCorrected), string(dedup.DecisionConfirmed), string(dedup.DecisionRejected)}
	var others []string
	for d := range s.Decisions {
		if !slices.Contains(order, d) {
			others = append(others, d)
		}
	}
	slices.Sort(others)
	for _, d := range append(order, others...) {
		if n, ok := s.Decisions[d]; ok {
			if _, err := fmt.Fprintf(w, "  %-14s %d\n", d, n); err != nil {
				return err
			}
		}
	}
	if s.Replayed > 0 {
		_, err := fmt.Fprintf(w, "  %-14s %d (observation_id seen before: nothing changed)\n", "replayed", s.Replayed)
		return err
	}
	return nil
}
