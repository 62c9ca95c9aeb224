package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/internal/demo"
)

// TestReadmeWritePath runs the README's write-path example as it is
// written there, against serve --demo: every request's answer is the
// sample the README shows (but its time), and what the text says of the
// question asked after each is what the server answers. It also checks
// the demo's answer to a REST route the embedded store does not serve.
func TestReadmeWritePath(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- write-path example[^>]*-->(.*?)<!-- end write-path example -->").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no write-path example")
	}
	// Each request: its path, its body (quoted in '...' over lines) and the
	// answer shown below it as "# " comment lines.
	steps := regexp.MustCompile(`(?s)curl -s localhost:6333(\S+) -H '[^']*' -d '([^']*)'\n((?:#[^\n]*\n)+)`).FindAllSubmatch(m[1], -1)
	if len(steps) != 2 {
		t.Fatalf("found %d requests in the example, want the observe and the correction", len(steps))
	}
	httpAddr, _, _ := startServe(t, "--demo", "--data", t.TempDir())
	base := "http://" + httpAddr
	// ask is the README's question: the ids of the first three results,
	// each with its guard, and the ids the answer left out as superseded.
	ask := func() (top []string, superseded []string) {
		t.Helper()
		code, body := jsonRequest(t, http.MethodPost, base+"/v1/retrieve", `{"collection":"`+demo.Collection+`","text":"what editor does Dana use","limit":3}`)
		var ans struct {
			Result []struct {
				ID    json.RawMessage
				Guard string
			}
			Dropped []struct {
				ID     json.RawMessage
				Reason string
			}
		}
		if err := json.Unmarshal([]byte(body), &ans); code != http.StatusOK || err != nil {
			t.Fatalf("retrieve: %d %v %s", code, err, body)
		}
		for _, r := range ans.Result {
			top = append(top, strings.Trim(string(r.ID), `"`)+" "+r.Guard)
		}
		for _, d := range ans.Dropped {
			if d.Reason == "superseded" {
				superseded = append(superseded, strings.Trim(string(d.ID), `"`))
			}
		}
		return top, superseded
	}
	const helix = "8a2a583a-f019-5b7f-ad34-1feed985689b"
	// What the README says of the question after each request.
	after := []struct {
		top        []string
		superseded []string
	}{
		{[]string{helix + " relevant", "1001 below_band", "e9f63c27-b3a0-52ef-812a-fc38edc5ef3f below_band"}, []string{"1025"}},
		{[]string{helix + " relevant", "1003 relevant", "e9f63c27-b3a0-52ef-812a-fc38edc5ef3f below_band"}, []string{"1001", "1025"}},
	}
	for i, s := range steps {
		code, body := jsonRequest(t, http.MethodPost, base+string(s[1]), string(s[2]))
		if code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", s[1], code, body)
		}
		shown := regexp.MustCompile(`(?m)^#\s*`).ReplaceAllString(string(s[3]), "")
		if diff := cmp.Diff(withoutTime(t, shown), withoutTime(t, body)); diff != "" {
			t.Errorf("%s: the README's answer (-) and the server's (+):\n%s", s[1], diff)
		}
		top, superseded := ask()
		if diff := cmp.Diff(after[i].top, top); diff != "" {
			t.Errorf("after %s, the question's first results (-README +server):\n%s", s[1], diff)
		}
		if diff := cmp.Diff(after[i].superseded, superseded); diff != "" {
			t.Errorf("after %s, left out as superseded (-README +server):\n%s", s[1], diff)
		}
	}

	// The demo has no Qdrant behind it: a route the REST front does not
	// translate says the embedded store does not serve it.
	code, body := jsonRequest(t, http.MethodPost, base+"/collections/"+demo.Collection+"/points/recommend", `{"positive":[1001],"limit":3}`)
	if want := "memrank's REST front does not serve POST /collections/dana_memories/points/recommend: the embedded store has only the routes the front translates"; code != http.StatusNotFound || !strings.Contains(body, want) {
		t.Errorf("recommend: %d %s, want 404 %q", code, body, want)
	}
}

// withoutTime is a JSON answer as a value, without its time.
func withoutTime(t *testing.T, answer string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		t.Fatalf("%v: %s", err, answer)
	}
	delete(v, "time")
	return v
}
