package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memrank/memrank/internal/demo"
)

// TestServeDemoReset: a restarted demo keeps what was observed into it;
// --demo-reset drops the collection and its audit trail and loads the set
// afresh, and says so.
func TestServeDemoReset(t *testing.T) {
	dir := t.TempDir()
	const obs = `{"collection":"dana_memories","text":"Dana switched her editor to Helix","source":"direct","observation_id":"obs-reset"}`
	memoryURL := func(base, id string) string { return base + "/v1/memories/" + id + "?collection=" + demo.Collection }
	count := func(base string) string {
		_, body := jsonRequest(t, http.MethodPost, base+"/collections/"+demo.Collection+"/points/count", `{"exact":true}`)
		return body[:strings.Index(body, `}`)+1]
	}

	httpAddr, _, stop := startServe(t, "--demo", "--data", dir)
	base := "http://" + httpAddr
	code, body := jsonRequest(t, http.MethodPost, base+"/v1/observe", obs)
	if code != http.StatusOK || !strings.Contains(body, `"decision":"inserted"`) {
		t.Fatalf("observe: %d %s", code, body)
	}
	id := body[strings.Index(body, `"memory_id":"`)+len(`"memory_id":"`):]
	id = id[:strings.Index(id, `"`)]
	wantCount := count(base)
	stop()

	tests := []struct {
		name    string
		flags   []string
		said    string
		memory  int    // GET /v1/memories/{id} of the observation
		count   string // the collection's count
		notSaid string
	}{
		{name: "--demo keeps it", flags: []string{"--demo"}, said: "memrank: demo: collection dana_memories already exists, kept as it is (--demo-reset loads it afresh)\n",
			memory: http.StatusOK, count: wantCount, notSaid: "dropped"},
		{name: "--demo-reset loads it afresh", flags: []string{"--demo-reset"},
			said:   "memrank: demo: dropped dana_memories to load it afresh\nmemrank: demo: loaded 198 memories into dana_memories\n",
			memory: http.StatusNotFound, count: `{"result":{"count":198}`, notSaid: "kept as it is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			httpAddr, _, stop := startServe(t, append(tt.flags, "--data", dir)...)
			base := "http://" + httpAddr
			if code, body := jsonRequest(t, http.MethodGet, memoryURL(base, id), ``); code != tt.memory {
				t.Errorf("the observed memory: %d %s, want %d", code, body, tt.memory)
			}
			if got := count(base); got != tt.count {
				t.Errorf("count %s, want %s", got, tt.count)
			}
			// The same observation id is new again after a reset: the audit
			// trail went with the collection.
			_, body := jsonRequest(t, http.MethodPost, base+"/v1/observe", obs)
			if replayed := strings.Contains(body, `"replayed":true`); replayed == (tt.memory == http.StatusNotFound) {
				t.Errorf("observe again: %s", body)
			}
			_, stderr := stop()
			if !strings.Contains(stderr, tt.said) || strings.Contains(stderr, tt.notSaid) {
				t.Errorf("stderr lacks %q or says %q:\n%s", tt.said, tt.notSaid, stderr)
			}
		})
	}
}
