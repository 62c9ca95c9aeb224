package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"github.com/spf13/cobra"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
)

// maxLineBytes bounds one input line; a longer line is reported and skipped.
const maxLineBytes = 16 << 20

type scoreOptions struct {
	now       string
	baseScore float64
	limit     int
	json      bool
}

func newScoreCmd(e *env) *cobra.Command {
	var o scoreOptions
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Score memories read as JSON lines on stdin and explain every factor",
		Long: `Read memories as JSON lines on stdin, one payload object per line with the keys of the
memory record (text, memory_type, source, extractor_model, confidence, created_at, ...; an
optional "id" labels the line), score them as one candidate set at --now against
--base-score, and print for each: confidence, freshness, access boost, weight, the gate,
render, tier and retrievable decisions, and every component. Results come best first.

A line that is not a JSON object is reported with its line number and skipped; the
others are still scored, and memrank exits with status 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.loadConfig(nil, nil)
			if err != nil {
				return err
			}
			codec, err := codecFor(c)
			if err != nil {
				return usageError{err}
			}
			now := time.Now().UTC()
			if o.now != "" {
				t, ok := memory.ParseTime(o.now)
				if !ok {
					return usageError{fmt.Errorf("--now %q is not an RFC 3339 time", o.now)}
				}
				now = t
			}
			if math.IsNaN(o.baseScore) || o.baseScore < 0 || math.IsInf(o.baseScore, 0) {
				return usageError{fmt.Errorf("--base-score %v must be a finite number >= 0", o.baseScore)}
			}
			items, bad, err := readMemories(e.stdin, codec, e.stderr)
			if err != nil {
				return err
			}
			results := scoreAll(codec, items, o.baseScore, now, o.limit)
			if o.json {
				err = writeJSON(e.stdout, results)
			} else {
				err = writeTable(e.stdout, results)
			}
			if err != nil {
				return err
			}
			if bad > 0 {
				fmt.Fprintf(e.stderr, "memrank: %d line(s) could not be scored\n", bad)
				return exitError{exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.now, "now", "", "score as of this RFC 3339 time (default: the current time)")
	cmd.Flags().Float64Var(&o.baseScore, "base-score", 1, "the similarity score every memory is given as its base")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "return at most this many results, as a query would (0: all)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object per memory instead of a table")
	return cmd
}

// item is one input line that decoded to a memory.
type item struct {
	line int
	id   string
	mem  memory.Memory
}

// readMemories decodes every line; a line that is not a JSON object is
// reported on errw with its number and skipped.
func readMemories(r io.Reader, codec *memory.Codec, errw io.Writer) (items []item, bad int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		data, tooLong, err := readLine(br)
		if err != nil && err != io.EOF {
			return nil, bad, fmt.Errorf("reading stdin: %w", err)
		}
		if tooLong {
			fmt.Fprintf(errw, "memrank: line %d: longer than %d bytes, skipped\n", line, maxLineBytes)
			bad++
		} else if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 {
			it, perr := decodeLine(trimmed, codec)
			if perr != nil {
				fmt.Fprintf(errw, "memrank: line %d: %v\n", line, perr)
				bad++
			} else {
				it.line = line
				items = append(items, it)
			}
		}
		if err == io.EOF {
			return items, bad, nil
		}
	}
}

// readLine reads one line without its newline; past maxLineBytes it drains
// the rest of the line and reports it too long.
func readLine(br *bufio.Reader) (data []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(data)+len(chunk) > maxLineBytes {
			tooLong = true
			data = data[:0]
		} else {
			data = append(data, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			data = nil
		}
		return bytes.TrimSuffix(data, []byte("\n")), tooLong, err
	}
}

func decodeLine(data []byte, codec *memory.Codec) (item, error) {
	payload, err := qdrantjson.DecodePayload(data)
	if err != nil {
		return item{}, err
	}
	it := item{id: idLabel(payload["id"])}
	codec.Decode(payload, &it.mem)
	return it, nil
}

func idLabel(v *qdrant.Value) string {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		return k.StringValue
	case *qdrant.Value_IntegerValue:
		return strconv.FormatInt(k.IntegerValue, 10)
	}
	return ""
}

// result is one memory's verdict, in output order.
type result struct {
	item     *item
	in       scoring.Inputs
	score    scoring.Score
	expl     scoring.Explanation
	rank     int    // 1-based among returned results; 0 when not returned
	decision string // returned | below_gate | gated | cut | excluded
	reason   string // why excluded
}

// scoreAll treats the items as one candidate set, as the read path would:
// exclusions, the retrieval gate, best first, the top limit, the render gate.
func scoreAll(codec *memory.Codec, items []item, base float64, now time.Time, limit int) []result {
	p := codec.Params()
	res := make([]result, len(items))
	cands := make([]scoring.Score, 0, len(items))
	for i := range items {
		r := &res[i]
		r.item = &items[i]
		r.in = codec.Inputs(&items[i].mem)
		r.in.Seq = i
		r.score = p.Evaluate(&r.in, base, now)
		if reason := items[i].mem.Exclusion(r.score); reason != "" {
			r.decision, r.reason = "excluded", reason
			continue
		}
		cands = append(cands, r.score)
	}
	kept, belowGate := p.GateRetrieval(cands)
	for i := range res {
		if res[i].decision == "" {
			res[i].decision = "gated"
		}
	}
	for _, s := range kept {
		res[s.Seq].decision = "cut"
	}
	top := scoring.TopK(kept, limit)
	p.GateRender(top)
	for i, s := range top {
		r := &res[s.Seq]
		r.score = s
		r.rank = i + 1
		r.decision = "returned"
		if belowGate {
			r.decision = "below_gate"
		}
	}
	for i := range res {
		res[i].expl = p.Explain(&res[i].in, res[i].score, base, now)
		if res[i].rank == 0 {
			res[i].expl.Render = false // only returned results are rendered
		}
	}
	// Returned results in rank order, then the rest by weight.
	slices.SortStableFunc(res, func(a, b result) int {
		switch {
		case a.rank > 0 && b.rank > 0:
			return a.rank - b.rank
		case a.rank > 0:
			return -1
		case b.rank > 0:
			return 1
		}
		if a.score.Weight != b.score.Weight {
			if a.score.Weight > b.score.Weight {
				return -1
			}
			return 1
		}
		return a.item.line - b.item.line
	})
	return res
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func writeTable(w io.Writer, res []result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tLINE\tID\tDECISION\tCONF\tFROM\tFRESH\tACCESS\tBOOST\tWEIGHT\tRENDER\tTIER\tRETRIEVABLE\ts\tn\tr\te\tt\tGROUNDING\tPROBLEMS")
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
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			rank, r.item.line, id, decision, conf, from, f3(e.Freshness), e.AccessCount, f3(e.AccessBoost),
			f3(e.Weight), yesNo(e.Render), tier, yesNo(e.Retrievable), comps, problemsText(r.item.mem.Problems))
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
	AccessCount     int64          `json:"access_count"`
	AccessBoost     float64        `json:"access_boost"`
	Weight          float64        `json:"weight"`
	BelowGate       bool           `json:"below_gate"`
	Render          bool           `json:"render"`
	Tier            string         `json:"tier,omitempty"`
	Bucket          string         `json:"bucket,omitempty"`
	Retrievable     bool           `json:"retrievable"`
	Protected       bool           `json:"protected"`
	IdleDays        float64        `json:"idle_days"`
	DecayFloor      *float64       `json:"decay_floor,omitempty"`
	DaysRetrievable *float64       `json:"days_retrievable"` // null: never drops out by decay
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

func writeJSON(w io.Writer, res []result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range res {
		e := r.expl
		j := jsonResult{
			Line: r.item.line, ID: r.item.id, Rank: r.rank, Decision: r.decision, ExcludedBecause: r.reason,
			Unscored: e.Unscored, ConfidenceFrom: "none", BaseScore: r6(e.Base), AgeDays: r6(e.AgeDays),
			HalfLifeDays: e.HalfLife, Freshness: r6(e.Freshness), AccessCount: e.AccessCount,
			AccessBoost: r6(e.AccessBoost), Weight: r6(e.Weight), BelowGate: e.BelowGate, Render: e.Render,
			Retrievable: e.Retrievable, Protected: e.Protected, IdleDays: r6(e.IdleDays),
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
		if !math.IsInf(e.DaysRetrievable, 1) {
			j.DaysRetrievable = ptr(r6(e.DaysRetrievable))
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}
