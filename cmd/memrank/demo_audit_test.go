package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/memory"
)

// TestServeDemoAudit: `serve --demo` gives every demo memory the audit
// record a backfill writes for a memory it adopts, and nothing else (the
// wiki pages are not memories), so that a memory's history on the explain
// page is not empty; the memories' payloads are the demo set's.
func TestServeDemoAudit(t *testing.T) {
	httpAddr, _, _ := startServe(t, "--demo", "--data", t.TempDir())
	base := "http://" + httpAddr
	points, err := demo.Points()
	if err != nil {
		t.Fatal(err)
	}
	memories := 0
	for _, p := range points {
		if _, ok := p.Payload[memory.FieldSchema.String()]; ok {
			memories++
		}
	}
	if memories == 0 || memories == len(points) {
		t.Fatalf("the demo set has %d memories of %d points: the test needs both kinds", memories, len(points))
	}

	tests := []struct {
		name   string
		filter string
		want   int
	}{
		{"backfill records", `{"must":[{"key":"reason","match":{"value":"backfill"}},{"key":"decision","match":{"value":"backfilled"}}]}`, memories},
		{"every audit record", `{"must":[{"key":"kind","match":{"value":"audit"}}]}`, memories},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := jsonRequest(t, http.MethodPost, base+"/collections/"+demo.Collection+memory.AuditSuffix+"/points/count",
				`{"exact":true,"filter":`+tc.filter+`}`)
			var got struct {
				Result struct{ Count int } `json:"result"`
			}
			if code != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil {
				t.Fatalf("count: %d %s", code, body)
			}
			if got.Result.Count != tc.want {
				t.Errorf("%d records, want %d (one per demo memory)", got.Result.Count, tc.want)
			}
		})
	}

	// One memory's history, as the explain page reads it.
	const id = 1001
	code, body := jsonRequest(t, http.MethodGet, base+"/v1/memories/"+strconv.Itoa(id)+"?collection="+demo.Collection, "")
	var view struct {
		Result struct {
			Payload map[string]json.RawMessage `json:"payload"`
			Audit   []struct {
				Reason   string  `json:"reason"`
				Decision string  `json:"decision"`
				New      float64 `json:"new"`
			} `json:"audit"`
		} `json:"result"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &view) != nil {
		t.Fatalf("memory %d: %d %s", id, code, body)
	}
	a := view.Result.Audit
	if len(a) != 1 || a[0].Reason != "backfill" || a[0].Decision != "backfilled" {
		t.Fatalf("memory %d: audit %+v, want one backfill record", id, a)
	}
	i := slices.IndexFunc(points, func(p demo.Point) bool { return p.ID.GetNum() == id })
	want := points[i].Payload
	if a[0].New != want["confidence"].GetDoubleValue() {
		t.Errorf("recorded confidence %v, stored %v", a[0].New, want["confidence"].GetDoubleValue())
	}
	var gotKeys, wantKeys []string
	for k := range view.Result.Payload {
		gotKeys = append(gotKeys, k)
	}
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	slices.Sort(gotKeys)
	slices.Sort(wantKeys)
	if diff := cmp.Diff(wantKeys, gotKeys); diff != "" {
		t.Errorf("memory %d's payload keys (-demo set +stored):\n%s", id, diff)
	}
	if got := string(view.Result.Payload["text"]); got != strconv.Quote(want["text"].GetStringValue()) {
		t.Errorf("text %s, want %q", got, want["text"].GetStringValue())
	}
}
