package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/internal/apiclient"
	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/internal/explaintable"
	"github.com/memrank/memrank/server/native"
)

type explainOptions struct {
	collection, text, vector, filter string
	limit, offset                    int
	at                               string
	url, apiKey                      string
	tenants                          tenantFlags
	demo, asJSON, wide               bool
}

func newExplainCmd(e *env) *cobra.Command {
	var o explainOptions
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Run a retrieve and print every factor of every score",
		Long: `Run one retrieve (a text, embedded with the configured embedder, or a vector) and print a
table of every factor behind each result: weight = base x freshness factor x access boost x
confidence factor, the freshness f and the query's focus on recent memories that make the
freshness factor, the confidence and its components (s, n, r(n), e, t, grounding), age and
half-life, access count, gate, render, the tier (and the stored one where it differs) and the
duplicates folded in; then the candidates left out and why.

--at asks for the answer as of a time (RFC 3339, or a date YYYY-MM-DD for that day's 00:00
UTC): freshness and tiers then, memories first observed later left out, supersessions recorded
later not yet applied. Access counts and confidence stay today's: the store keeps no history
of them.

With --url it asks a running memrank (POST URL/v1/retrieve). Without, it builds the read path
in process on the configured upstream (--upstream, or the embedded store in --data, which a
running serve holds locked). Either way its look-ups are not counted as accesses: looking at a
ranking must not change it. --demo loads the demo set first, as serve --demo does, and makes
--collection default to it.

The table fits the terminal's width when stdout is one, else $COLUMNS when set; it leaves out
its least telling columns first (the confidence's components, then the factors' inputs, then
the factors) and says which. Piped with no $COLUMNS, or with --wide, it prints every column.`,
		Example: `  memrank explain --demo --text "what editor does Dana use"
  memrank explain --url http://localhost:6333 --collection dana_memories --text "where does Dana live"
  memrank explain --url http://localhost:6333 --collection dana_memories --text "where does Dana live" --at 2026-06-01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.collection == "" && o.demo {
				o.collection = demo.Collection
			}
			body, err := o.body()
			if err != nil {
				return usageError{err}
			}
			if err := o.tenants.check(o.url); err != nil {
				return err
			}
			c, err := e.loadConfig(cmd.Flags(), map[string]string{"upstream": "upstream.grpc", "data": "store.data_dir"})
			if err != nil {
				return remoteTenancyHint(o.url, err)
			}
			if err := o.tenants.resolve(o.url, c.Tenancy.Header); err != nil {
				return err
			}
			var resp *native.RetrieveResponse
			if o.url != "" {
				resp, err = o.remote(cmd.Context(), c, body)
			} else {
				resp, err = o.local(cmd.Context(), e, c, body)
			}
			if err != nil {
				return err
			}
			if o.asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(resp)
			}
			width := 0
			if !o.wide {
				width = e.width()
			}
			return explaintable.Write(e.stdout, resp, explaintable.Options{TextKey: c.PayloadKeys.Text, Width: width})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "collection to search (default with --demo: dana_memories)")
	f.StringVar(&o.text, "text", "", "query text, embedded with the configured embedder")
	f.StringVar(&o.vector, "vector", "", "query vector as a JSON array, instead of --text")
	f.StringVar(&o.filter, "filter", "", "Qdrant REST filter JSON")
	f.IntVar(&o.limit, "limit", 10, "results")
	f.IntVar(&o.offset, "offset", 0, "results skipped")
	f.StringVar(&o.at, "at", "", "answer as of this time: RFC 3339, or YYYY-MM-DD (that day's 00:00 UTC)")
	f.StringVar(&o.url, "url", "", "a running memrank's HTTP address (e.g. http://localhost:6333); empty: in process")
	f.StringVar(&o.apiKey, "api-key", "", "api-key sent with the request")
	o.tenants.addFlags(f)
	f.BoolVar(&o.demo, "demo", false, "load the demo set first (in process only)")
	f.BoolVar(&o.asJSON, "json", false, "print the native API's JSON answer instead of a table")
	f.BoolVar(&o.wide, "wide", false, "print every column of the table, however wide")
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
	// count_access false: a person inspecting a ranking must not raise the
	// access boost of what they look at (the in-process read path counts
	// nothing either).
	req := map[string]any{"collection": o.collection, "limit": o.limit, "offset": o.offset, "explain": true, "count_access": false}
	if o.text != "" {
		req["text"] = o.text
	} else {
		req["vector"] = json.RawMessage(o.vector)
	}
	if o.filter != "" {
		req["filter"] = json.RawMessage(o.filter)
	}
	if o.at != "" {
		// The request's at: the server, and the read path in process
		// (native.Service.Retrieve), answer as of it (rank.AsOf).
		at, err := parseAsOf(o.at)
		if err != nil {
			return nil, err
		}
		req["at"] = at.Format(time.RFC3339Nano)
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

// parseAsOf reads --at: an RFC 3339 time, or a date (YYYY-MM-DD) meaning
// that day's 00:00 UTC; the time is in UTC.
func parseAsOf(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--at %q: want an RFC 3339 time (2026-06-01T12:00:00Z) or a date (2026-06-01)", s)
}

// remote asks a running memrank, with the caller's credentials and tenant.
func (o *explainOptions) remote(ctx context.Context, c Config, body []byte) (*native.RetrieveResponse, error) {
	if o.demo {
		return nil, usageError{errors.New("--demo loads the demo in process; with --url, start the server with serve --demo")}
	}
	r, err := apiclient.NewRemote(apiclient.RemoteConfig{
		URL: o.url, APIKey: o.apiKey, TenantHeader: o.tenants.header, Tenant: o.tenants.tenant, Timeout: time.Minute,
	})
	if err != nil {
		return nil, usageError{fmt.Errorf("--url: %w", err)}
	}
	defer r.Close()
	return r.Retrieve(ctx, body)
}

func (o *explainOptions) local(ctx context.Context, e *env, c Config, body []byte) (_ *native.RetrieveResponse, err error) {
	// Logs would interleave with the table: they go nowhere.
	s, err := e.openLocal(ctx, c, io.Discard, false, urlHint())
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
	o.tenants.addTo(md)
	ctx = metadata.NewOutgoingContext(ctx, md)
	return s.native.Retrieve(ctx, req, md)
}
