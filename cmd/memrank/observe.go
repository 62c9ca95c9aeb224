package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/apiclient"
	"github.com/memrank/memrank/server/native"
)

// writeOptions say where the write path is; observe and import share them.
type writeOptions struct {
	url, apiKey string
	tenants     tenantFlags
	timeout     time.Duration
}

// writeFlagKeys maps the write commands' flags to configuration keys.
var writeFlagKeys = map[string]string{"upstream": "upstream.grpc", "data": "store.data_dir"}

func (w *writeOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&w.url, "url", "", "a running memrank's HTTP address (e.g. http://localhost:6333); empty: in process")
	f.StringVar(&w.apiKey, "api-key", "", "api-key sent with each write")
	w.tenants.addFlags(f)
	f.DurationVar(&w.timeout, "timeout", time.Minute, "bound on each observation's write")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT, in process (empty: the embedded store in --data)")
	f.String("data", defaultConfig().Store.DataDir, "data directory of the embedded store, in process")
}

// openObserverFunc opens the write path and returns it with the function
// that releases it. Tests substitute a fake.
type openObserverFunc func(ctx context.Context, e *env, cmd *cobra.Command, w *writeOptions) (apiclient.Observer, func() error, error)

// openObserver is the write path the flags name: a running memrank with
// --url, else the engine of an in-process stack on the configured upstream
// (a running serve holds the embedded store locked). Either way the tenant
// is found as the HTTP API finds it.
func openObserver(ctx context.Context, e *env, cmd *cobra.Command, w *writeOptions) (apiclient.Observer, func() error, error) {
	if w.timeout <= 0 {
		return nil, nil, usageError{fmt.Errorf("--timeout %v must be positive", w.timeout)}
	}
	if err := w.tenants.check(w.url); err != nil {
		return nil, nil, err
	}
	c, err := e.loadConfig(cmd.Flags(), writeFlagKeys)
	if err != nil {
		return nil, nil, remoteTenancyHint(w.url, err)
	}
	// In process the local tenancy is the one that applies; with --url it
	// is the server's, which only the header to send the tenant in says.
	if w.url == "" && w.tenants.tenant != "" && c.Tenancy.Key == "" {
		return nil, nil, usageError{errors.New("--tenant: tenancy is off in the configuration (tenancy.key is empty)")}
	}
	if err := w.tenants.resolve(w.url, c.Tenancy.Header); err != nil {
		return nil, nil, err
	}
	if w.url != "" {
		r, err := apiclient.NewRemote(apiclient.RemoteConfig{
			URL: w.url, APIKey: w.apiKey, TenantHeader: w.tenants.header, Tenant: w.tenants.tenant, Timeout: w.timeout,
		})
		if err != nil {
			return nil, nil, usageError{fmt.Errorf("--url %w", err)}
		}
		return r, func() error { r.Close(); return nil }, nil
	}
	// Logs would interleave with the outcome and the progress bar.
	s, err := e.openLocal(ctx, c, io.Discard, false, urlHint())
	if err != nil {
		return nil, nil, err
	}
	closeStack := func() error { return s.close(context.Background()) }
	md := metadata.MD{}
	if w.apiKey != "" {
		md.Set("api-key", w.apiKey)
	}
	w.tenants.addTo(md)
	tenant, err := s.policy.Tenant(md)
	if err != nil {
		closeStack()
		return nil, nil, usageError{fmt.Errorf("tenancy is on: %w (give --tenant or a tenant's --api-key)", err)}
	}
	l := &apiclient.Local{Engine: s.engine, Tenant: tenant, Timeout: w.timeout}
	if w.apiKey != "" {
		l.Auth = func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, "api-key", w.apiKey)
		}
	} else {
		l.Auth = s.cfg.Upstream.OwnContext
	}
	return l, closeStack, nil
}

type observeOptions struct {
	write  writeOptions
	fields observeFields
	json   string
	output string
}

// observeFields are the observation's flags; their names differ from the
// JSON keys where a shorter flag reads better.
type observeFields struct {
	collection, text, memoryType, source, extractorModel, grounding string
	session, turn, observedAt, modality, decayCategory              string
	observationID, corrects, attribution, speaker                   string
	logprob                                                         float64
	entities                                                        []string
}

// observeFlagKeys maps each observation flag to its JSON key.
var observeFlagKeys = []struct{ flag, key string }{
	{"collection", "collection"}, {"text", "text"}, {"type", "memory_type"}, {"source", "source"},
	{"extractor-model", "extractor_model"}, {"extractor-logprob", "extractor_logprob"}, {"grounding", "grounding"},
	{"session", "session_id"}, {"turn", "turn_id"}, {"observed-at", "observed_at"}, {"modality", "modality"},
	{"entity", "entities"}, {"decay-category", "decay_category"}, {"observation-id", "observation_id"},
	{"corrects", "corrects"}, {"attribution", "attribution"}, {"speaker", "speaker"},
}

func newObserveCmd(e *env) *cobra.Command { return observeCommand(e, openObserver) }

func observeCommand(e *env, open openObserverFunc) *cobra.Command {
	var o observeOptions
	cmd := &cobra.Command{
		Use:   "observe",
		Short: "Offer one observation to the write path and print its decision",
		Long: `Offer one candidate memory to the write path, which decides what it is: new (inserted), the
same fact restated (restatement), the same fact observed independently (independent: n + 1),
a contradiction of a stored memory, or rejected (grounding not_supported: not stored). The
decision, the memory it landed in, its confidence and n are printed, or with --output json
the native API's result object. The answer's warnings (a memory stored below the retrieval
gate, which comes back only as the best match of a question) go to stderr, each prefixed
"warning: ".

The observation comes from the flags, or from --json: a /v1/observe body given inline, or
read from stdin with --json - (then only --collection may be added, filling a missing
collection).

With --url it posts to a running memrank (POST URL/v1/observe). Without, it runs the write
path in process on the configured upstream (--upstream, or the embedded store in --data,
which a running serve holds locked). When tenancy is on, --tenant (or a tenant's --api-key)
names the tenant.`,
		Example: `  memrank observe --collection memories --text "Dana uses Neovim" --type preference \
    --source direct --extractor-model gpt-4o --session s1 --turn t4 --entity Dana --entity Neovim
  memrank observe --collection chat --text "I went hiking on Sunday" --speaker Caroline --source direct --session s3
  echo '{"collection": "memories", "text": "Dana moved to Lisbon", "session_id": "s2"}' | memrank observe --json -
  memrank observe --url http://localhost:6333 --api-key KEY --json '{"collection": "memories", "text": "..."}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.output != "text" && o.output != "json" {
				return usageError{fmt.Errorf("--output %q: want text or json", o.output)}
			}
			obs, err := o.observation(cmd.Flags(), e.stdin)
			if err != nil {
				return err
			}
			ob, closeFn, err := open(cmd.Context(), e, cmd, &o.write)
			if err != nil {
				return err
			}
			out, err := ob.Observe(cmd.Context(), obs)
			if cerr := closeFn(); err == nil && cerr != nil {
				fmt.Fprintf(e.stderr, "memrank: closing the write path: %v\n", cerr)
			}
			if err != nil {
				if apiclient.InputFault(err, obs) {
					return usageError{fmt.Errorf("the observation was refused: %w", err)}
				}
				return fmt.Errorf("observe: %w", err)
			}
			// What the caller may not expect of the stored memory (its
			// confidence below the retrieval gate): on stderr, so that
			// stdout stays the outcome alone.
			for _, w := range out.Warnings {
				fmt.Fprintf(e.stderr, "warning: %s\n", w)
			}
			if o.output == "json" {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(out)
			}
			_, err = fmt.Fprintln(e.stdout, apiclient.FormatOutcome(out))
			return err
		},
	}
	f := cmd.Flags()
	p := &o.fields
	f.StringVar(&p.collection, "collection", "", "collection to write to (with --json: fills a missing collection)")
	f.StringVar(&p.text, "text", "", "the memory's text (required without --json)")
	f.StringVar(&p.memoryType, "type", "", "memory type: entity, event, fact, preference or relation (default fact)")
	f.StringVar(&p.source, "source", "", "direct, confirmed, strong_inference, weak_inference or speculation (default weak_inference)")
	f.StringVar(&p.extractorModel, "extractor-model", "", "the model that extracted the memory")
	f.Float64Var(&p.logprob, "extractor-logprob", 0, "the extractor's mean token log-probability (<= 0)")
	f.StringVar(&p.grounding, "grounding", "", "supported, partial, unknown or not_supported (default supported)")
	f.StringVar(&p.session, "session", "", "session id (independence is counted across sessions)")
	f.StringVar(&p.turn, "turn", "", "turn id within the session")
	f.StringVar(&p.observedAt, "observed-at", "", "when it was observed, RFC 3339 (default now)")
	f.StringVar(&p.modality, "modality", "", "chat, calendar, email, document...")
	f.StringArrayVar(&p.entities, "entity", nil, "an entity the memory is about (repeat for several)")
	f.StringVar(&p.decayCategory, "decay-category", "", "decay category (sets the half-life)")
	f.StringVar(&p.observationID, "observation-id", "", "idempotency key: sent again, the earlier decision is returned")
	f.StringVar(&p.corrects, "corrects", "", "id of a memory this observation corrects (it always wins)")
	f.StringVar(&p.attribution, "attribution", "", "who asserted it: self, or reported (hearsay: its source is capped)")
	f.StringVar(&p.speaker, "speaker", "", `who said the text, a name: the subject of a first-person statement, so two people's statements never fold together (default: a leading "Name:" of the text)`)
	f.StringVar(&o.json, "json", "", "the observation as a /v1/observe JSON body, or - to read it from stdin")
	f.StringVarP(&o.output, "output", "o", "text", "text or json")
	o.write.addFlags(f)
	return cmd
}

// maxObserveBody bounds --json - (the HTTP API's own body limit).
const maxObserveBody = native.DefaultMaxBodyBytes

// observation builds the observation from --json or the flags, read by the
// HTTP API's own decoder and checked by the write path's rules, so that a
// bad observation is refused before any write path is opened.
func (o *observeOptions) observation(fs *pflag.FlagSet, stdin io.Reader) (dedup.Observation, error) {
	if o.json != "" {
		for _, k := range observeFlagKeys {
			if k.flag != "collection" && fs.Changed(k.flag) {
				return dedup.Observation{}, usageError{fmt.Errorf("--json and --%s: give the observation one way (only --collection may add to --json)", k.flag)}
			}
		}
		body := []byte(o.json)
		if o.json == "-" {
			var err error
			if body, err = io.ReadAll(io.LimitReader(stdin, maxObserveBody+1)); err != nil {
				return dedup.Observation{}, fmt.Errorf("reading stdin: %w", err)
			}
			if len(body) > maxObserveBody {
				return dedup.Observation{}, usageError{fmt.Errorf("--json -: stdin holds more than %d bytes", maxObserveBody)}
			}
		}
		obs, err := native.DecodeObserveRequest(body)
		if err != nil {
			return dedup.Observation{}, usageError{fmt.Errorf("--json: %w", err)}
		}
		if obs.Collection == "" {
			obs.Collection = o.fields.collection
		}
		if obs.Collection == "" {
			return dedup.Observation{}, usageError{errors.New(`--json: collection: required (in the body, or --collection)`)}
		}
		if err := obs.Validate(dedup.DefaultMaxTextBytes); err != nil {
			return dedup.Observation{}, usageError{fmt.Errorf("--json: %w", err)}
		}
		return obs, nil
	}
	if !fs.Changed("text") {
		return dedup.Observation{}, usageError{errors.New("--text is required (or give the observation with --json)")}
	}
	if o.fields.collection == "" {
		return dedup.Observation{}, usageError{errors.New("--collection is required")}
	}
	p := &o.fields
	body := map[string]any{}
	for _, kv := range []struct {
		key string
		v   string
	}{
		{"collection", p.collection}, {"text", p.text}, {"memory_type", p.memoryType}, {"source", p.source},
		{"extractor_model", p.extractorModel}, {"grounding", p.grounding}, {"session_id", p.session},
		{"turn_id", p.turn}, {"observed_at", p.observedAt}, {"modality", p.modality},
		{"decay_category", p.decayCategory}, {"observation_id", p.observationID}, {"corrects", p.corrects},
		{"attribution", p.attribution}, {"speaker", p.speaker},
	} {
		if kv.v != "" || kv.key == "text" {
			body[kv.key] = kv.v
		}
	}
	if fs.Changed("extractor-logprob") {
		body["extractor_logprob"] = p.logprob
	}
	if len(p.entities) > 0 {
		body["entities"] = p.entities
	}
	b, err := json.Marshal(body)
	if err != nil {
		// NaN or Inf from --extractor-logprob.
		return dedup.Observation{}, usageError{fmt.Errorf("--extractor-logprob %v: want a finite number <= 0", p.logprob)}
	}
	obs, err := native.DecodeObserveRequest(b)
	if err == nil {
		err = obs.Validate(dedup.DefaultMaxTextBytes)
	}
	if err != nil {
		return dedup.Observation{}, usageError{flagError(err)}
	}
	return obs, nil
}

// flagError names the flag behind an error on a JSON key.
func flagError(err error) error {
	var ie *dedup.InputError
	if !errors.As(err, &ie) {
		return err
	}
	field, index, _ := strings.Cut(ie.Field, "[")
	for _, k := range observeFlagKeys {
		if k.key == field {
			name := "--" + k.flag
			if index != "" {
				// entities[2] is the third --entity.
				if n, err := strconv.Atoi(strings.TrimSuffix(index, "]")); err == nil {
					name += " #" + strconv.Itoa(n+1)
				}
			}
			return fmt.Errorf("%s: %s", name, ie.Reason)
		}
	}
	return err
}
