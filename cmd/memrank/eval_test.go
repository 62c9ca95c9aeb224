package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

var smallSet = filepath.Join("..", "..", "internal", "eval", "testdata", "small.jsonl")

// runCLI runs memrank in process and returns its exit code, stdout and
// stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, nil)
	return code, stdout.String(), stderr.String()
}

// evalJSON is the part of eval --json the tests read.
type evalJSON struct {
	Split    string `json:"split"`
	Where    string `json:"where"`
	Variants []struct {
		Name       string   `json:"name"`
		Label      string   `json:"label"`
		Same       []string `json:"same_as"`
		Queries    int      `json:"queries"`
		P5         float64  `json:"p_at_5"`
		Inversions int      `json:"inversions"`
		Lifted     int      `json:"lifted"`
		Withheld   int      `json:"withheld"`
	} `json:"variants"`
	PerQuery []struct {
		ID      string                    `json:"id"`
		Metrics map[string]map[string]any `json:"metrics"`
	} `json:"per_query"`
	Fit *struct {
		Collection string `json:"collection"`
		Rows       []struct {
			Name    string             `json:"name"`
			Weights map[string]float64 `json:"weights"`
			Train   *float64           `json:"train_inversion_fraction"`
			Test    *struct {
				P5 float64 `json:"p_at_5"`
			} `json:"test"`
		} `json:"rows"`
	} `json:"fit"`
	Notes []string `json:"notes"`
}

func parseEvalJSON(t *testing.T, out string) evalJSON {
	t.Helper()
	var all map[string]any
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("eval --json is not JSON: %v\n%s", err, out)
	}
	var r evalJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	return r
}

func TestEvalJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "eval", "--json", "--fit", smallSet)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
	r := parseEvalJSON(t, out)
	var names []string
	for _, v := range r.Variants {
		names = append(names, v.Name)
		if v.Queries != 4 {
			t.Errorf("%s: %d queries", v.Name, v.Queries)
		}
	}
	want := []string{"raw", "memrank", "freshness_weight_0", "focus_off", "access_weight_0", "confidence_weight_1", "gate_off"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("variants (-want +got):\n%s", diff)
	}
	if len(r.PerQuery) != 4 || r.PerQuery[0].ID != "q-editor" || len(r.PerQuery[0].Metrics) != len(want) {
		t.Errorf("per_query %+v", r.PerQuery)
	}
	if r.Fit == nil || r.Fit.Collection != "eval_fit" || len(r.Fit.Rows) != 2 || r.Fit.Rows[1].Name != "fitted" ||
		r.Fit.Rows[1].Train == nil || r.Fit.Rows[1].Test == nil {
		t.Fatalf("fit %+v", r.Fit)
	}
	sum := 0.0
	for _, w := range r.Fit.Rows[1].Weights {
		sum += w
	}
	if sum < 0.999999 || sum > 1.000001 {
		t.Errorf("fitted weights %v sum to %v", r.Fit.Rows[1].Weights, sum)
	}
}

// TestEvalUpstream runs eval against the embedded store served over TCP,
// as memrank qdrant-compat serves it: the first run creates and loads the
// collection, the second uses it as it is.
func TestEvalUpstream(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- upstream.Serve(ctx, store.NewServer(db), lis, time.Second) }()
	defer func() {
		cancel()
		<-done
	}()
	addr := lis.Addr().String()

	for i, wantNotes := range []int{0, 1} {
		code, out, errOut := runCLI(t, "eval", "--json", "--upstream", addr, "--upstream-api-key", "k", "--collection", "mem", smallSet)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, errOut)
		}
		r := parseEvalJSON(t, out)
		if r.Where != "Qdrant at "+addr || len(r.Notes) != wantNotes {
			t.Errorf("run %d: where %q, notes %q", i, r.Where, r.Notes)
		}
		if raw := r.Variants[0]; raw.Name != "raw" || raw.Inversions != 0 || raw.P5 < 0.26 || raw.P5 > 0.27 {
			t.Errorf("run %d: raw row %+v", i, raw)
		}
	}
}

// TestEvalURL runs eval against a running memrank's /v1/retrieve (a fake
// here: the contract is the request and answer bodies).
func TestEvalURL(t *testing.T) {
	var mu sync.Mutex
	var modes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Collection string    `json:"collection"`
			Vector     []float32 `json:"vector"`
			Limit      int       `json:"limit"`
			Explain    bool      `json:"explain"`
			Mode       *string   `json:"mode"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || r.URL.Path != "/v1/retrieve" || r.Header.Get("api-key") != "secret" ||
			body.Collection != "dana" || body.Explain || len(body.Vector) != 4 {
			t.Errorf("request %s %+v: %v", r.URL.Path, body, err)
		}
		mode := "(none)"
		if body.Mode != nil {
			mode = *body.Mode
		}
		mu.Lock()
		modes = append(modes, mode)
		mu.Unlock()
		io.WriteString(w, `{"result": [{"id": 1, "score": 0.5}], "status": "ok", "time": 0, "reranked": true}`)
	}))
	defer srv.Close()
	code, out, errOut := runCLI(t, "eval", "--url", srv.URL, "--api-key", "secret", "--collection", "dana", smallSet)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"\nraw similarity ", "\nmemrank (as the server is configured) ", "note: a running memrank ranks with its own clock"} {
		if !strings.Contains(out, want) {
			t.Errorf("output without %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "guard off") {
		t.Errorf("a running memrank has two rows:\n%s", out)
	}
	off, none := 0, 0
	for _, m := range modes {
		switch m {
		case "off":
			off++
		case "(none)":
			none++
		}
	}
	if off != 4 || none != 4 {
		t.Errorf("modes %q: want 4 off and 4 without a mode", modes)
	}
}
