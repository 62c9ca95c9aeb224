package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/apiclient"
	"github.com/memrank/memrank/server/native"
)

// fakeObserver records the observations it is offered and answers with
// answer (nil: inserted).
type fakeObserver struct {
	mu     sync.Mutex
	got    []dedup.Observation
	answer func(n int, obs dedup.Observation) (dedup.Outcome, error)
}

func (f *fakeObserver) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	f.mu.Lock()
	f.got = append(f.got, obs)
	n := len(f.got)
	f.mu.Unlock()
	if f.answer == nil {
		return dedup.Outcome{Decision: dedup.DecisionInserted, MemoryID: "m" + strconv.Itoa(n), Confidence: 0.5}, nil
	}
	return f.answer(n, obs)
}

func (f *fakeObserver) observed() []dedup.Observation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]dedup.Observation(nil), f.got...)
}

// fakeOpen opens ob, remembering the write options it was given and
// whether the write path was closed.
type fakeOpen struct {
	ob     apiclient.Observer
	opts   writeOptions
	opened int
	closed int
	err    error
}

func (f *fakeOpen) open(ctx context.Context, e *env, cmd *cobra.Command, w *writeOptions) (apiclient.Observer, func() error, error) {
	f.opened++
	f.opts = *w
	if f.err != nil {
		return nil, nil, f.err
	}
	return f.ob, func() error { f.closed++; return nil }, nil
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

// execute runs cmd as run does: its error becomes an exit code and a
// "memrank: " line on stderr.
func execute(t *testing.T, build func(e *env) *cobra.Command, stdin string, environ []string, args ...string) cmdResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr, environ: environ}
	cmd := build(e)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	cmd.SetIn(e.stdin)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	code := exitOK
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &ue) || isCobraUsage(err):
		code = exitUsage
		stderr.WriteString("memrank: " + err.Error() + "\n")
	default:
		code = exitFailure
		stderr.WriteString("memrank: " + err.Error() + "\n")
	}
	return cmdResult{code, stdout.String(), stderr.String()}
}

func TestObserveFlags(t *testing.T) {
	lp := -0.25
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  dedup.Observation
	}{
		{
			name: "every flag",
			args: []string{"--collection", "memories", "--text", "Dana uses Neovim", "--type", "preference", "--source", "direct",
				"--extractor-model", "gpt-4o", "--extractor-logprob", "-0.25", "--grounding", "partial", "--session", "s1", "--turn", "t4",
				"--observed-at", "2026-05-01T12:00:00Z", "--modality", "chat", "--entity", "Dana", "--entity", "Neovim, the editor",
				"--decay-category", "preference", "--observation-id", "obs-1", "--corrects", "553f9722-8ebe-5636-9720-a487cf263fc6",
				"--attribution", "self", "--speaker", "Dana"},
			want: dedup.Observation{Collection: "memories", Text: "Dana uses Neovim", MemoryType: "preference", Source: "direct",
				ExtractorModel: "gpt-4o", ExtractorLogprob: &lp, Grounding: "partial", SessionID: "s1", TurnID: "t4",
				ObservedAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Modality: "chat", Entities: []string{"Dana", "Neovim, the editor"},
				DecayCategory: "preference", ObservationID: "obs-1", Corrects: "553f9722-8ebe-5636-9720-a487cf263fc6",
				Attribution: "self", Speaker: "Dana"},
		},
		{
			name: "a speaker",
			args: []string{"--collection", "c", "--text", "I went hiking on Sunday", "--speaker", "Caroline"},
			want: dedup.Observation{Collection: "c", Text: "I went hiking on Sunday", Speaker: "Caroline"},
		},
		{
			name: "text and collection only",
			args: []string{"--collection", "c", "--text", "x"},
			want: dedup.Observation{Collection: "c", Text: "x"},
		},
		{
			name: "a zero logprob is sent",
			args: []string{"--collection", "c", "--text", "x", "--extractor-logprob", "0"},
			want: dedup.Observation{Collection: "c", Text: "x", ExtractorLogprob: new(float64)},
		},
		{
			name: "inline JSON",
			args: []string{"--json", `{"collection":"c","text":"from JSON","vector":[0.5,1],"entities":["e"],"speaker":"Melanie"}`},
			want: dedup.Observation{Collection: "c", Text: "from JSON", Vector: []float32{0.5, 1}, Entities: []string{"e"}, Speaker: "Melanie"},
		},
		{
			name:  "JSON on stdin, collection from the flag",
			args:  []string{"--json", "-", "--collection", "fallback"},
			stdin: `{"text":"from stdin","session_id":"s9"}` + "\n",
			want:  dedup.Observation{Collection: "fallback", Text: "from stdin", SessionID: "s9"},
		},
		{
			name: "the body's collection wins over the flag",
			args: []string{"--json", `{"collection":"own","text":"x"}`, "--collection", "fallback"},
			want: dedup.Observation{Collection: "own", Text: "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fo := &fakeObserver{}
			op := &fakeOpen{ob: fo}
			r := execute(t, func(e *env) *cobra.Command { return observeCommand(e, op.open) }, tt.stdin, nil, tt.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			got := fo.observed()
			if len(got) != 1 {
				t.Fatalf("observed %d times", len(got))
			}
			if diff := cmp.Diff(tt.want, got[0]); diff != "" {
				t.Errorf("observation (-want +got):\n%s", diff)
			}
			if op.closed != 1 {
				t.Errorf("write path closed %d times", op.closed)
			}
			if r.stdout != "inserted m1 confidence=0.500 observations=0 dedup_tier=0\n" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}

// TestObserveOutput: the outcome comes out as apiclient.FormatOutcome's
// line, or with --output json as the native API's result object.
func TestObserveOutput(t *testing.T) {
	tests := []struct {
		name string
		out  dedup.Outcome
		want string
	}{
		{"independent via the judge", dedup.Outcome{Decision: dedup.DecisionIndependent, MemoryID: "7", Confidence: 0.81234, Observations: 2, Tier: 3,
			Judge: &dedup.JudgeInfo{Verdict: "same", Cached: true}},
			"independent 7 confidence=0.812 observations=2 dedup_tier=3 judge=same(cached)\n"},
		{"rejected", dedup.Outcome{Decision: dedup.DecisionRejected, Reason: "grounding is not_supported"},
			"rejected (not stored): grounding is not_supported\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fo := &fakeObserver{answer: func(int, dedup.Observation) (dedup.Outcome, error) { return tt.out, nil }}
			op := &fakeOpen{ob: fo}
			r := execute(t, func(e *env) *cobra.Command { return observeCommand(e, op.open) }, "", nil, "--collection", "c", "--text", "x")
			if r.code != 0 || r.stdout != tt.want {
				t.Errorf("exit %d, stdout %q, want %q (stderr %s)", r.code, r.stdout, tt.want, r.stderr)
			}
			r = execute(t, func(e *env) *cobra.Command { return observeCommand(e, op.open) }, "", nil, "--collection", "c", "--text", "x", "--output", "json")
			var got dedup.Outcome
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
				t.Fatalf("exit %d, %v: %s", r.code, err, r.stdout)
			}
			if diff := cmp.Diff(tt.out, got); diff != "" {
				t.Errorf("--output json (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObserveWarnings: the answer's warnings go to stderr, prefixed
// "warning: "; stdout is the outcome alone (the JSON carries them too).
func TestObserveWarnings(t *testing.T) {
	warn := "the memory's confidence 0.4675 is below the retrieval gate 0.5: it is returned only as the best match of a question"
	out := dedup.Outcome{Decision: dedup.DecisionInserted, MemoryID: "m1", Confidence: 0.4675, Warnings: []string{warn, "another"}}
	fo := &fakeObserver{answer: func(int, dedup.Observation) (dedup.Outcome, error) { return out, nil }}
	op := &fakeOpen{ob: fo}
	wantErr := "warning: " + warn + "\nwarning: another\n"

	r := execute(t, func(e *env) *cobra.Command { return observeCommand(e, op.open) }, "", nil, "--collection", "c", "--text", "Dana keeps bees")
	if r.code != 0 || r.stdout != "inserted m1 confidence=0.468 observations=0 dedup_tier=0\n" || r.stderr != wantErr {
		t.Errorf("exit %d, stdout %q, stderr %q; want the outcome on stdout, the warnings on stderr", r.code, r.stdout, r.stderr)
	}
	r = execute(t, func(e *env) *cobra.Command { return observeCommand(e, op.open) }, "", nil, "--collection", "c", "--text", "Dana keeps bees", "-o", "json")
	var got dedup.Outcome
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v: %s", r.code, err, r.stdout)
	}
	if diff := cmp.Diff(out, got); diff != "" || r.stderr != wantErr {
		t.Errorf("--output json (-want +got):\n%s\nstderr %q", diff, r.stderr)
	}
}

func TestObserveErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		err   error // the write path's answer
		code  int
		msg   string
	}{
		{"no text", []string{"--collection", "c"}, "", nil, 2, "--text is required"},
		{"blank text", []string{"--collection", "c", "--text", " "}, "", nil, 2, "--text: required and must not be blank"},
		{"no collection", []string{"--text", "x"}, "", nil, 2, "--collection is required"},
		{"bad time names the flag", []string{"--collection", "c", "--text", "x", "--observed-at", "yesterday"}, "", nil, 2,
			`--observed-at: want an RFC 3339 time such as 2026-05-01T12:00:00Z, got "yesterday"`},
		{"bad grounding", []string{"--collection", "c", "--text", "x", "--grounding", "solid"}, "", nil, 2, "--grounding: want one of"},
		{"positive logprob", []string{"--collection", "c", "--text", "x", "--extractor-logprob", "2"}, "", nil, 2, "--extractor-logprob: a mean log-probability is at most 0"},
		{"NaN logprob", []string{"--collection", "c", "--text", "x", "--extractor-logprob", "NaN"}, "", nil, 2, "--extractor-logprob NaN: want a finite number"},
		{"blank entity", []string{"--collection", "c", "--text", "x", "--entity", "a", "--entity", ""}, "", nil, 2, "--entity #2: must not be blank"},
		{"blank speaker", []string{"--collection", "c", "--text", "x", "--speaker", "  "}, "", nil, 2, "--speaker: must not be blank"},
		{"long speaker", []string{"--collection", "c", "--text", "x", "--speaker", strings.Repeat("s", dedup.MaxEntityBytes+1)}, "", nil, 2, "--speaker: at most"},
		{"JSON and --speaker", []string{"--json", `{"collection":"c","text":"x"}`, "--speaker", "Ann"}, "", nil, 2, "--json and --speaker"},
		{"JSON blank speaker", []string{"--json", `{"collection":"c","text":"x","speaker":" "}`}, "", nil, 2, "--json: speaker: must not be blank"},
		{"bad corrects", []string{"--collection", "c", "--text", "x", "--corrects", "the last one"}, "", nil, 2, "--corrects: want a memory id"},
		{"text without letters", []string{"--collection", "c", "--text", "?!"}, "", nil, 2, "--text: has no letters or digits"},
		{"long collection", []string{"--collection", strings.Repeat("c", 256), "--text", "x"}, "", nil, 2, "--collection: at most 255 bytes, got 256"},
		{"grounding alias", []string{"--collection", "c", "--text", "x", "--grounding", "grounded"}, "", nil, 2, `--grounding: want one of supported, partial, unknown, not_supported, got "grounded"`},
		{"JSON refused by the rules", []string{"--json", `{"collection":"c","text":"x","vector":[]}`}, "", nil, 2, "--json: vector: must not be empty"},
		{"JSON and flags", []string{"--json", `{"text":"x"}`, "--text", "y"}, "", nil, 2, "--json and --text"},
		{"JSON unknown key", []string{"--json", `{"collection":"c","text":"x","txt":"y"}`}, "", nil, 2, "--json: txt: unknown field"},
		{"JSON without a collection", []string{"--json", `{"text":"x"}`}, "", nil, 2, "--json: collection: required"},
		{"JSON on empty stdin", []string{"--json", "-"}, "", nil, 2, "--json: body: empty"},
		{"bad output", []string{"--collection", "c", "--text", "x", "--output", "yaml"}, "", nil, 2, `--output "yaml"`},
		{"positional argument", []string{"--collection", "c", "--text", "x", "extra"}, "", nil, 2, "unknown command"},
		{"refused by the write path", []string{"--collection", "c", "--text", "x"}, "", &dedup.InputError{Field: "memory_type", Reason: "unknown"}, 2,
			"the observation was refused: memory_type: unknown"},
		{"write path down", []string{"--collection", "c", "--text", "x"}, "", errors.New("upstream: connection refused"), 1, "observe: upstream: connection refused"},
		{"collection not found", []string{"--collection", "c", "--text", "x"}, "", dedup.ErrNotFound, 1, "observe: dedup: not found"},
		{"corrected memory not found", []string{"--collection", "c", "--text", "x", "--corrects", "7"}, "", dedup.ErrNotFound, 2, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fo := &fakeObserver{answer: func(int, dedup.Observation) (dedup.Outcome, error) {
				return dedup.Outcome{Decision: dedup.DecisionInserted}, tt.err
			}}
			op := &fakeOpen{ob: fo}
			r := execute(t, func(e *env) *cobra.Command { return observeCommand(e, op.open) }, tt.stdin, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("exit %d (want %d), stderr %q lacks %q", r.code, tt.code, r.stderr, tt.msg)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
			if tt.err == nil && op.opened != 0 {
				t.Error("the write path was opened for a refused observation")
			}
		})
	}
}

// observeServer is a memrank HTTP API stand-in that checks what it is sent
// and answers answer(n).
type observeServer struct {
	t      *testing.T
	calls  atomic.Int64
	mu     sync.Mutex
	got    []dedup.Observation
	header []http.Header
	answer func(n int) (int, string)
}

func (s *observeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(s.calls.Add(1))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/observe" || r.Header.Get("Content-Type") != "application/json" {
		s.t.Errorf("request %s %s (content-type %q)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	body, _ := io.ReadAll(r.Body)
	// The server's own decoder must accept what the CLI sends.
	obs, err := native.DecodeObserveRequest(body)
	if err != nil {
		s.t.Errorf("the CLI sent a body the API refuses: %v: %s", err, body)
	}
	s.mu.Lock()
	s.got = append(s.got, obs)
	s.header = append(s.header, r.Header.Clone())
	s.mu.Unlock()
	code, resp := http.StatusOK, `{"result":{"decision":"inserted","memory_id":"42","confidence":0.7,"observations":0,"dedup_tier":0,"judge":null,"replayed":false},"status":"ok","time":0.001}`
	if s.answer != nil {
		code, resp = s.answer(n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	io.WriteString(w, resp)
}

func TestObserveRemote(t *testing.T) {
	srv := &observeServer{t: t}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	environ := []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__HEADER=x-tenant"}
	r := execute(t, newObserveCmd, "", environ, "--url", ts.URL+"/", "--api-key", "k1", "--tenant", "alice",
		"--collection", "memories", "--text", "Dana uses Neovim", "--entity", "Dana", "--observed-at", "2026-05-01T12:00:00+02:00",
		"--speaker", "Ann")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != "inserted 42 confidence=0.700 observations=0 dedup_tier=0\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if srv.calls.Load() != 1 {
		t.Fatalf("server called %d times", srv.calls.Load())
	}
	want := dedup.Observation{Collection: "memories", Text: "Dana uses Neovim", Entities: []string{"Dana"},
		ObservedAt: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC), Speaker: "Ann"}
	if diff := cmp.Diff(want, srv.got[0], cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("posted observation (-want +got):\n%s", diff)
	}
	if h := srv.header[0]; h.Get("Api-Key") != "k1" || h.Get("X-Tenant") != "alice" {
		t.Errorf("headers %v", h)
	}

	// With --url the server's tenancy counts: --tenant-header says where the
	// tenant goes with nothing configured locally, and wins over the local
	// tenancy.header.
	for _, tt := range []struct {
		name    string
		environ []string
		args    []string
		header  string
	}{
		{"--tenant-header, nothing configured", nil, []string{"--tenant-header", "X-Org-Tenant", "--tenant", "bob"}, "X-Org-Tenant"},
		{"--tenant-header over tenancy.header", environ, []string{"--tenant-header", "X-Org-Tenant", "--tenant", "bob"}, "X-Org-Tenant"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.calls.Load()
			r := execute(t, newObserveCmd, "", tt.environ, append([]string{"--url", ts.URL, "--collection", "memories", "--text", "Bob rows"}, tt.args...)...)
			if r.code != 0 || srv.calls.Load() != before+1 {
				t.Fatalf("exit %d, %d calls: %s", r.code, srv.calls.Load()-before, r.stderr)
			}
			h := srv.header[len(srv.header)-1]
			if h.Get(tt.header) != "bob" || (tt.header != "X-Tenant" && h.Get("X-Tenant") != "") {
				t.Errorf("headers %v, want the tenant in %s only", h, tt.header)
			}
		})
	}
	calls := srv.calls.Load()

	t.Run("usage", func(t *testing.T) {
		for _, tt := range []struct {
			name    string
			environ []string
			args    []string
			msg     string
		}{
			{"not a URL", nil, []string{"--url", "localhost:6333"}, `--url "localhost:6333" is not an http(s) URL`},
			{"tenant, no header to send it in", nil, []string{"--url", ts.URL, "--tenant", "a"}, "--tenant: give --tenant-header NAME"},
			{"tenant with api-key tenancy", []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__API_KEYS=k1=alice"},
				[]string{"--url", ts.URL, "--tenant", "a"}, "--tenant: give --tenant-header NAME"},
			{"tenant in process without tenancy", nil, []string{"--data", t.TempDir(), "--tenant", "a"}, "--tenant: tenancy is off"},
			{"tenant-header in process", nil, []string{"--data", t.TempDir(), "--tenant-header", "x-tenant", "--tenant", "a"},
				"--tenant-header: only with --url"},
			{"tenancy.header alone in the local config", []string{"MEMRANK_TENANCY__HEADER=x-tenant"}, []string{"--url", ts.URL, "--tenant", "a"},
				"with --url, tenancy is the server's: give the header it takes tenants from with --tenant-header"},
			{"tenant-header without a tenant", nil, []string{"--url", ts.URL, "--tenant-header", "x-tenant"}, "give --tenant too"},
			{"tenant-header a credential's", nil, []string{"--url", ts.URL, "--tenant-header", "api-key", "--tenant", "a"}, "carries credentials"},
			{"zero timeout", nil, []string{"--url", ts.URL, "--timeout", "0s"}, "--timeout 0s must be positive"},
		} {
			r := execute(t, newObserveCmd, "", tt.environ, append(tt.args, "--collection", "c", "--text", "x")...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("%s: exit %d, stderr %q lacks %q", tt.name, r.code, r.stderr, tt.msg)
			}
		}
		if n := srv.calls.Load(); n != calls {
			t.Errorf("usage errors reached the server: %d calls", n-calls)
		}
	})
}

// TestObserveSpeakerEndToEnd: --speaker and an import line's speaker reach
// a real serve's write path with --url: the same words from two people
// are two memories, each stored with its speaker.
func TestObserveSpeakerEndToEnd(t *testing.T) {
	addr, _, _ := startServe(t, "--data", t.TempDir())
	base := "http://" + addr
	const coll = "said"
	ids := map[string]string{}
	for _, who := range []string{"Caroline", "Melanie"} {
		r := execute(t, newObserveCmd, "", nil, "--url", base, "--collection", coll, "--text", "That's awesome!",
			"--speaker", who, "--source", "direct", "--session", who, "-o", "json")
		var out struct {
			Decision string `json:"decision"`
			MemoryID string `json:"memory_id"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil || out.Decision != "inserted" {
			t.Fatalf("observe --speaker %s: exit %d, %v, stdout %q, stderr %q", who, r.code, err, r.stdout, r.stderr)
		}
		ids[who] = out.MemoryID
	}
	if ids["Caroline"] == ids["Melanie"] {
		t.Errorf("one memory %s for two speakers", ids["Caroline"])
	}
	path := writeTemp(t, "said.jsonl", `{"text":"I went hiking with my dog on Sunday","speaker":"Dana","source":"direct","session_id":"d1"}`+"\n")
	if r := execute(t, newImportCmd, "", nil, "--url", base, "--collection", coll, path); r.code != 0 || !strings.Contains(r.stdout, "1 applied") {
		t.Fatalf("import: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, h := range nativeRetrieve(t, base, coll, "who went hiking with a dog", 5) {
		if strings.Contains(h.Text, "hiking") {
			ids["Dana"] = h.ID
		}
	}
	if ids["Dana"] == "" {
		t.Fatal("the imported memory is not retrieved")
	}
	for who, id := range ids {
		if code, m := nativeGetMemory(t, base, coll, id); code != http.StatusOK || m.Payload.Speaker != who {
			t.Errorf("memory %s: %d, speaker %q, want %s", id, code, m.Payload.Speaker, who)
		}
	}
}
