package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/server/native"
)

type explainOptions struct {
	collection, text, vector, filter string
	limit, offset                    int
	url, apiKey, tenant              string
	demo, asJSON                     bool
}

func newExplainCmd(e *env) *cobra.Command {
	var o explainOptions
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Run a retrieve and print every factor of every score",
		Long: `Run one retrieve (a text, embedded with the configured embedder, or a vector) and print a
table of every factor behind each result: weight = base x freshness x access boost, the
confidence and its components (s, n, r(n), e, t, grounding), age and half-life, access count,
gate, render, tier and the duplicates folded in.

With --url it asks a running memrank (POST URL/v1/retrieve). Without, it builds the read path
in process on the configured upstream (--upstream, or the embedded store in --data, which a
running serve holds locked) and does not count its look-ups as accesses. --demo loads the demo
set first, as serve --demo does, and makes --collection default to it.`,
		Example: `  memrank explain --demo --text "what editor does Dana use"
  memrank explain --url http://localhost:6333 --collection dana_memories --text "where does Dana live"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.collection == "" && o.demo {
				o.collection = demo.Collection
			}
			body, err := o.body()
			if err != nil {
				return usageError{err}
			}
			var resp *native.RetrieveResponse
			if o.url != "" {
				resp, err = o.remote(cmd.Context(), body)
			} else {
				resp, err = o.local(cmd.Context(), e, cmd, body)
			}
			if err != nil {
				return err
			}
			if o.asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(resp)
			}
			return writeExplainTable(e.stdout, resp)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "collection to search (default with --demo: dana_memories)")
	f.StringVar(&o.text, "text", "", "query text, embedded with the configured embedder")
	f.StringVar(&o.vector, "vector", "", "query vector as a JSON array, instead of --text")
	f.StringVar(&o.filter, "filter", "", "Qdrant REST filter JSON")
	f.IntVar(&o.limit, "limit", 10, "results")
	f.IntVar(&o.offset, "offset", 0, "results skipped")
	f.StringVar(&o.url, "url", "", "a running memrank's HTTP address (e.g. http://localhost:6333); empty: in process")
	f.StringVar(&o.apiKey, "api-key", "", "api-key sent with the request")
	f.StringVar(&o.tenant, "tenant", "", "tenant, when tenancy is on (sent in the configured tenancy header)")
	f.BoolVar(&o.demo, "demo", false, "load the demo set first (in process only)")
	f.BoolVar(&o.asJSON, "json", false, "print the native API's JSON answer instead of a table")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("data", "./memrank-data", "data directory of the embedded store")
	return cmd
}

// body is the /v1/retrieve request; DecodeRetrieveRequest checks it exactly as
// the HTTP API would.
func (o *explainOptions) body() ([]byte, error) {
	if o.collection == "" {
		return nil, errors.New("--collection is required (or --demo)")
	}
	if (o.text == "") == (o.vector == "") {
		return nil, errors.New("give exactly one of --text and --vector")
	}
	req := map[string]any{"collection": o.collection, "limit": o.limit, "offset": o.offset, "explain": true}
	if o.text != "" {
		req["text"] = o.text
	} else {
		req["vector"] = json.RawMessage(o.vector)
	}
	if o.filter != "" {
		req["filter"] = json.RawMessage(o.filter)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("--vector or --filter: %w", err)
	}
	if _, err := native.DecodeRetrieveRequest(b); err != nil {
		return nil, err
	}
	return b, nil
}

func (o *explainOptions) remote(ctx context.Context, body []byte) (*native.RetrieveResponse, error) {
	if o.demo {
		return nil, usageError{errors.New("--demo loads the demo in process; with --url, start the server with serve --demo")}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(o.url, "/")+"/v1/retrieve", bytes.NewReader(body))
	if err != nil {
		return nil, usageError{fmt.Errorf("--url %q: %w", o.url, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	if o.apiKey != "" {
		req.Header.Set("api-key", o.apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var qe struct {
			Status struct{ Error string } `json:"status"`
		}
		if json.Unmarshal(b, &qe) == nil && qe.Status.Error != "" {
			return nil, fmt.Errorf("%s: %s", resp.Status, qe.Status.Error)
		}
		return nil, fmt.Errorf("%s: %.200s", resp.Status, b)
	}
	var out native.RetrieveResponse
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("the answer of %s is not a retrieve response: %w", o.url, err)
	}
	return &out, nil
}

func (o *explainOptions) local(ctx context.Context, e *env, cmd *cobra.Command, body []byte) (_ *native.RetrieveResponse, err error) {
	c, err := e.loadConfig(cmd.Flags(), map[string]string{"upstream": "upstream.grpc", "data": "store.data_dir"})
	if err != nil {
		return nil, err
	}
	// Logs would interleave with the table: they go nowhere.
	s, err := newStack(ctx, c, io.Discard, false)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.close(context.Background())) }()
	if o.demo {
		if _, err := s.loadDemo(ctx); err != nil {
			return nil, err
		}
	}
	req, err := native.DecodeRetrieveRequest(body)
	if err != nil {
		return nil, usageError{err}
	}
	md := metadata.MD{}
	if o.apiKey != "" {
		md.Set("api-key", o.apiKey)
	}
	if o.tenant != "" && c.Tenancy.Header != "" {
		md.Set(c.Tenancy.Header, o.tenant)
	}
	ctx = metadata.NewOutgoingContext(ctx, md)
	return s.native.Retrieve(ctx, req, md)
}

// writeExplainTable prints one row per result with every factor.
func writeExplainTable(w io.Writer, r *native.RetrieveResponse) error {
	fmt.Fprintf(w, "mode %s: %s\n", r.Mode, r.Detection)
	if !r.Reranked {
		fmt.Fprintf(w, "not re-ranked (%s): scores are Qdrant's\n", r.PassThrough)
	}
	if g := r.Guard; g != nil {
		switch {
		case !g.Applied:
			fmt.Fprintf(w, "relevance guard off (%s): every result ordered by weight\n", g.From)
		case g.Relative:
			fmt.Fprintf(w, "relevance guard (%s): relevant when the score is at least %s (the best, %s, less %s of it): %d relevant, %d beyond, ordered by score after them\n",
				g.From, num(g.Cutoff, 4), num(g.Best, 4), num(g.RelativeBand, 2), g.Relevant, g.Beyond)
		default:
			fmt.Fprintf(w, "relevance guard (%s): relevant when the similarity is at least %s (the best, %s, less %s; floor %s): %d relevant, %d beyond, ordered by similarity after them\n",
				g.From, num(g.Cutoff, 4), num(g.Best, 4), num(g.Band, 2), num(g.Floor, 2), g.Relevant, g.Beyond)
		}
	}
	if sh := r.Shadow; sh != nil {
		fmt.Fprintf(w, "shadow: memrank would answer %v (overlap %s, first result changed: %s)\n", sh.Memrank, num(sh.Overlap, 2), yesNo(sh.TopChanged))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tID\tSCORE\tGUARD\tWEIGHT\t= BASE\tx FRESH\tx BOOST\tx CONF_F\tCONF\tS\tN\tR(N)\tE\tT\tGROUND\tAGE_D\tHALF_D\tACCESS\tGATE\tRENDER\tTIER\tFOLDED\tTEXT")
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
			i+1, res.ID, num(res.Score, 4), optStr(res.Guard), num(res.Weight, 4), num(res.BaseScore, 4), optNum(res.Freshness, 3), optNum(res.AccessBoost, 3), confF,
			conf, s, n, rn, ex, t, ground, age, half, optInt(res.AccessCount), gate, yesNo(res.Render),
			optStr(res.Tier), foldedText, payloadText(res.Payload, 48))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range r.Result {
		for _, p := range res.Problems {
			fmt.Fprintf(w, "%s: problem: %s\n", res.ID, p)
		}
	}
	return nil
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

// payloadText is the payload's text field, cut to n runes, for a glance at
// what the result is.
func payloadText(raw json.RawMessage, n int) string {
	var p struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Text == "" {
		return "-"
	}
	t := strings.Join(strings.Fields(p.Text), " ")
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
