package scoretable

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/memrank/memrank/memory"
)

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// WriteTable prints one row per result with every factor, aligned.
func WriteTable(w io.Writer, res []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tLINE\tID\tDECISION\tCONF\tFROM\tFRESH\tFRESH_F\tACCESS\tBOOST\tWEIGHT\tRENDER\tTIER\tIN_FLOOR\ts\tn\tr\te\tt\tGROUNDING\tPROBLEMS")
	for _, r := range res {
		e := r.expl
		rank, id := "-", r.item.id
		if r.rank > 0 {
			rank = strconv.Itoa(r.rank)
		}
		if id == "" {
			id = "-"
		}
		decision := r.decision
		if r.reason != "" {
			decision += " (" + r.reason + ")"
		}
		conf, from, comps := "-", "none", "-\t-\t-\t-\t-\t-"
		if !e.Unscored {
			conf, from = f3(e.Confidence), "stored"
			if e.ComputedConfidence {
				from = "computed"
			}
			comps = fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s", f3(e.Source), e.Observations, f3(e.Repetition), f3(e.Extractor), f3(e.Type), e.Grounding)
		}
		tier := e.Tier.String()
		if e.Unscored {
			tier = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			rank, r.item.line, id, decision, conf, from, f3(e.Freshness), f3(e.FreshnessFactor), e.AccessCount, f3(e.AccessBoost),
			f3(e.Weight), yesNo(e.Render), tier, yesNo(e.WithinFloor), comps, problemsText(r.item.mem.Problems))
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func problemsText(ps []memory.Problem) string {
	if len(ps) == 0 {
		return "-"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// jsonResult is the --json form of one result.
type jsonResult struct {
	Line            int            `json:"line"`
	ID              string         `json:"id,omitempty"`
	Rank            int            `json:"rank,omitempty"`
	Decision        string         `json:"decision"`
	ExcludedBecause string         `json:"excluded_because,omitempty"`
	Unscored        bool           `json:"unscored"`
	Confidence      *float64       `json:"confidence"`
	ConfidenceFrom  string         `json:"confidence_from"`
	BaseScore       float64        `json:"base_score"`
	AgeDays         float64        `json:"age_days"`
	HalfLifeDays    float64        `json:"half_life_days"`
	Freshness       float64        `json:"freshness"`
	FreshnessFactor float64        `json:"freshness_factor"`
	AccessCount     int64          `json:"access_count"`
	AccessBoost     float64        `json:"access_boost"`
	Weight          float64        `json:"weight"`
	BelowGate       bool           `json:"below_gate"`
	Render          bool           `json:"render"`
	Tier            string         `json:"tier,omitempty"`
	Bucket          string         `json:"bucket,omitempty"`
	WithinFloor     bool           `json:"within_decay_floor"`
	Protected       bool           `json:"protected"`
	IdleDays        float64        `json:"idle_days"`
	DecayFloor      *float64       `json:"decay_floor,omitempty"`
	DaysToArchive   *float64       `json:"days_to_archive"` // null: never archived by decay
	Components      *jsonComponent `json:"components,omitempty"`
	Problems        []string       `json:"problems"`
	TextHash        string         `json:"text_hash"`
	Text            string         `json:"text"`
}

type jsonComponent struct {
	Source           float64 `json:"s"`
	Observations     int     `json:"n"`
	Repetition       float64 `json:"r"`
	Extractor        float64 `json:"e"`
	Type             float64 `json:"t"`
	Grounding        string  `json:"grounding"`
	Formula          float64 `json:"formula"`
	GroundingPenalty float64 `json:"grounding_penalty"`
	Computed         float64 `json:"computed"`
}

// r6 rounds for output: six decimals are more than any decision needs and
// keep the output stable across platforms' last-bit differences.
func r6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func ptr(v float64) *float64 { return &v }

// WriteJSON prints one JSON object per result, a line each.
func WriteJSON(w io.Writer, res []Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range res {
		e := r.expl
		j := jsonResult{
			Line: r.item.line, ID: r.item.id, Rank: r.rank, Decision: r.decision, ExcludedBecause: r.reason,
			Unscored: e.Unscored, ConfidenceFrom: "none", BaseScore: r6(e.Base), AgeDays: r6(e.AgeDays),
			HalfLifeDays: e.HalfLife, Freshness: r6(e.Freshness), FreshnessFactor: r6(e.FreshnessFactor), AccessCount: e.AccessCount,
			AccessBoost: r6(e.AccessBoost), Weight: r6(e.Weight), BelowGate: e.BelowGate, Render: e.Render,
			WithinFloor: e.WithinFloor, Protected: e.Protected, IdleDays: r6(e.IdleDays),
			Problems: []string{}, TextHash: r.item.mem.Hash(), Text: r.item.mem.Text,
		}
		for _, p := range r.item.mem.Problems {
			j.Problems = append(j.Problems, p.String())
		}
		if !e.Unscored {
			j.Confidence = ptr(r6(e.Confidence))
			j.ConfidenceFrom = "stored"
			if e.ComputedConfidence {
				j.ConfidenceFrom = "computed"
			}
			j.Tier, j.Bucket = e.Tier.String(), e.Bucket.String()
			j.DecayFloor = ptr(r6(e.DecayFloor))
			j.Components = &jsonComponent{
				Source: r6(e.Source), Observations: e.Observations, Repetition: r6(e.Repetition),
				Extractor: r6(e.Extractor), Type: r6(e.Type), Grounding: e.Grounding.String(),
				Formula: r6(e.Formula), GroundingPenalty: r6(e.GroundingPenalty), Computed: r6(e.Computed),
			}
		}
		if !math.IsInf(e.DaysToArchive, 1) {
			j.DaysToArchive = ptr(r6(e.DaysToArchive))
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}
