package dedup_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/dedup"
)

// TestObservationValidate pins every rule on an observation and the text
// it answers with: these are the texts the native API, memrank observe and
// memrank import show.
func TestObservationValidate(t *testing.T) {
	const memID = "553f9722-8ebe-5636-9720-a487cf263fc6"
	ptr := func(f float64) *float64 { return &f }
	long := func(n int) string { return strings.Repeat("a", n) }
	ok := dedup.Observation{Collection: "mem", Text: "Dana uses Neovim"}
	with := func(f func(o *dedup.Observation)) dedup.Observation {
		o := ok
		f(&o)
		return o
	}
	tests := []struct {
		name string
		obs  dedup.Observation
		want *dedup.InputError // nil: accepted
	}{
		{"minimal", ok, nil},
		{"every field", dedup.Observation{Collection: long(255), Text: long(100), MemoryType: "preference", Source: "direct",
			ExtractorModel: long(256), ExtractorLogprob: ptr(0), Grounding: "not_supported", SessionID: "s", TurnID: "t",
			Modality: "chat", Entities: make([]string, 0, 64), DecayCategory: "preference", Vector: []float32{0, -1, math.MaxFloat32},
			ObservationID: "o", Corrects: "18446744073709551615", Tenant: "alice", Speaker: long(256)}, nil},
		{"corrects a simple UUID", with(func(o *dedup.Observation) { o.Corrects = strings.ReplaceAll(memID, "-", "") }), nil},
		{"source and type are the engine's", with(func(o *dedup.Observation) { o.Source, o.MemoryType = "rumour", "feeling" }), nil},

		{"no collection", with(func(o *dedup.Observation) { o.Collection = "" }), &dedup.InputError{Field: "collection", Reason: "required"}},
		{"long collection", with(func(o *dedup.Observation) { o.Collection = long(256) }),
			&dedup.InputError{Field: "collection", Reason: "at most 255 bytes, got 256"}},
		{"collection not UTF-8", with(func(o *dedup.Observation) { o.Collection = "m\xff" }), &dedup.InputError{Field: "collection", Reason: "not valid UTF-8"}},
		{"audit collection", with(func(o *dedup.Observation) { o.Collection = "mem" + dedup.AuditSuffix }),
			&dedup.InputError{Field: "collection", Reason: "names one of memrank's companions (_memrank_audit, _memrank_backfill, _memrank_reembed), not a memory collection"}},
		{"no text", with(func(o *dedup.Observation) { o.Text = "" }), &dedup.InputError{Field: "text", Reason: "required and must not be blank"}},
		{"blank text", with(func(o *dedup.Observation) { o.Text = " \n\t" }), &dedup.InputError{Field: "text", Reason: "required and must not be blank"}},
		{"long text", with(func(o *dedup.Observation) { o.Text = long(1025) }), &dedup.InputError{Field: "text", Reason: "at most 1024 bytes, got 1025"}},
		{"text not UTF-8", with(func(o *dedup.Observation) { o.Text = "Dana \xff" }), &dedup.InputError{Field: "text", Reason: "not valid UTF-8"}},
		{"punctuation only", with(func(o *dedup.Observation) { o.Text = "?!" }), &dedup.InputError{Field: "text", Reason: "has no letters or digits"}},
		{"long memory_type", with(func(o *dedup.Observation) { o.MemoryType = long(257) }),
			&dedup.InputError{Field: "memory_type", Reason: "at most 256 bytes, got 257"}},
		{"long turn_id", with(func(o *dedup.Observation) { o.TurnID = long(257) }), &dedup.InputError{Field: "turn_id", Reason: "at most 256 bytes, got 257"}},
		{"session_id not UTF-8", with(func(o *dedup.Observation) { o.SessionID = "\xc3" }), &dedup.InputError{Field: "session_id", Reason: "not valid UTF-8"}},
		{"long corrects", with(func(o *dedup.Observation) { o.Corrects = long(300) }), &dedup.InputError{Field: "corrects", Reason: "at most 256 bytes, got 300"}},
		{"positive logprob", with(func(o *dedup.Observation) { o.ExtractorLogprob = ptr(0.5) }),
			&dedup.InputError{Field: "extractor_logprob", Reason: "a mean log-probability is at most 0, got 0.5"}},
		{"NaN logprob", with(func(o *dedup.Observation) { o.ExtractorLogprob = ptr(math.NaN()) }),
			&dedup.InputError{Field: "extractor_logprob", Reason: "want a finite number, got NaN"}},
		{"infinite logprob", with(func(o *dedup.Observation) { o.ExtractorLogprob = ptr(math.Inf(-1)) }),
			&dedup.InputError{Field: "extractor_logprob", Reason: "want a finite number, got -Inf"}},
		{"unknown grounding", with(func(o *dedup.Observation) { o.Grounding = "solid" }),
			&dedup.InputError{Field: "grounding", Reason: `want one of supported, partial, unknown, not_supported, got "solid"`}},
		{"grounding alias", with(func(o *dedup.Observation) { o.Grounding = "Partial" }),
			&dedup.InputError{Field: "grounding", Reason: `want one of supported, partial, unknown, not_supported, got "Partial"`}},
		{"too many entities", with(func(o *dedup.Observation) { o.Entities = make([]string, 65) }),
			&dedup.InputError{Field: "entities", Reason: "at most 64 entries, got 65"}},
		{"long entity", with(func(o *dedup.Observation) { o.Entities = []string{"Dana", long(257)} }),
			&dedup.InputError{Field: "entities[1]", Reason: "at most 256 bytes, got 257"}},
		{"long speaker", with(func(o *dedup.Observation) { o.Speaker = long(257) }), &dedup.InputError{Field: "speaker", Reason: "at most 256 bytes, got 257"}},
		{"blank speaker", with(func(o *dedup.Observation) { o.Speaker = " " }),
			&dedup.InputError{Field: "speaker", Reason: "must not be blank (leave it out when unknown)"}},
		{"speaker not UTF-8", with(func(o *dedup.Observation) { o.Speaker = "D\xff" }), &dedup.InputError{Field: "speaker", Reason: "not valid UTF-8"}},
		{"blank entity", with(func(o *dedup.Observation) { o.Entities = []string{" "} }), &dedup.InputError{Field: "entities[0]", Reason: "must not be blank"}},
		{"empty vector", with(func(o *dedup.Observation) { o.Vector = []float32{} }),
			&dedup.InputError{Field: "vector", Reason: "must not be empty (leave it out to embed the text)"}},
		{"long vector", with(func(o *dedup.Observation) { o.Vector = make([]float32, 65537) }),
			&dedup.InputError{Field: "vector", Reason: "at most 65536 elements, got 65537"}},
		{"NaN in the vector", with(func(o *dedup.Observation) { o.Vector = []float32{1, float32(math.NaN())} }),
			&dedup.InputError{Field: "vector[1]", Reason: "not a finite number"}},
		{"infinity in the vector", with(func(o *dedup.Observation) { o.Vector = []float32{float32(math.Inf(1))} }),
			&dedup.InputError{Field: "vector[0]", Reason: "not a finite number"}},
		{"corrects not an id", with(func(o *dedup.Observation) { o.Corrects = "last one" }),
			&dedup.InputError{Field: "corrects", Reason: `want a memory id (a UUID or an unsigned integer), got "last one"`}},
		{"corrects negative", with(func(o *dedup.Observation) { o.Corrects = "-4" }),
			&dedup.InputError{Field: "corrects", Reason: `want a memory id (a UUID or an unsigned integer), got "-4"`}},
		{"corrects a braced UUID", with(func(o *dedup.Observation) { o.Corrects = "{" + memID + "}" }),
			&dedup.InputError{Field: "corrects", Reason: `want a memory id (a UUID or an unsigned integer), got "{` + memID + `}"`}},
		{"corrects beyond u64", with(func(o *dedup.Observation) { o.Corrects = "18446744073709551616" }),
			&dedup.InputError{Field: "corrects", Reason: `want a memory id (a UUID or an unsigned integer), got "18446744073709551616"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.obs.Validate(1024)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ie *dedup.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an InputError", err, err)
			}
			if diff := cmp.Diff(tt.want, ie); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfirmationValidate(t *testing.T) {
	ok := dedup.Confirmation{Collection: "mem", MemoryID: "7", ObservationID: "c-1", SessionID: "s", TurnID: "t"}
	with := func(f func(c *dedup.Confirmation)) dedup.Confirmation {
		c := ok
		f(&c)
		return c
	}
	tests := []struct {
		name string
		c    dedup.Confirmation
		want *dedup.InputError
	}{
		{"valid", ok, nil},
		{"no collection", with(func(c *dedup.Confirmation) { c.Collection = "" }), &dedup.InputError{Field: "collection", Reason: "required"}},
		{"audit collection", with(func(c *dedup.Confirmation) { c.Collection = "m" + dedup.AuditSuffix }),
			&dedup.InputError{Field: "collection", Reason: "names one of memrank's companions (_memrank_audit, _memrank_backfill, _memrank_reembed), not a memory collection"}},
		{"no id", with(func(c *dedup.Confirmation) { c.MemoryID = "" }),
			&dedup.InputError{Field: "id", Reason: `want a memory id (a UUID or an unsigned integer), got ""`}},
		{"bad id", with(func(c *dedup.Confirmation) { c.MemoryID = "x y" }),
			&dedup.InputError{Field: "id", Reason: `want a memory id (a UUID or an unsigned integer), got "x y"`}},
		{"long observation_id", with(func(c *dedup.Confirmation) { c.ObservationID = strings.Repeat("o", 257) }),
			&dedup.InputError{Field: "observation_id", Reason: "at most 256 bytes, got 257"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ie *dedup.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an InputError", err, err)
			}
			if diff := cmp.Diff(tt.want, ie); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckMemoryID(t *testing.T) {
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"0", true}, {"18446744073709551615", true}, {"553f9722-8ebe-5636-9720-a487cf263fc6", true},
		{"553F9722-8EBE-5636-9720-A487CF263FC6", true}, {"553f97228ebe56369720a487cf263fc6", true},
		{"", false}, {"-1", false}, {"1.5", false}, {"1e3", false}, {"18446744073709551616", false},
		{"553f9722-8ebe-5636-9720-a487cf263fcg", false}, {"553f9722+8ebe-5636-9720-a487cf263fc6", false},
		{"urn:uuid:553f9722-8ebe-5636-9720-a487cf263fc6", false}, {strings.Repeat("9", 1000), false},
	} {
		err := dedup.CheckMemoryID("id", tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("%.40q: %v, want ok %v", tt.id, err, tt.ok)
		}
		var ie *dedup.InputError
		if err != nil && (!errors.As(err, &ie) || ie.Field != "id" || len(ie.Reason) > 150) {
			t.Errorf("%.40q: error %v", tt.id, err)
		}
	}
}

// Every operation that names a collection applies the one rule on it.
func TestCollectionRuleEverywhere(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	long := strings.Repeat("c", 256)
	want := &dedup.InputError{Field: "collection", Reason: "at most 255 bytes, got 256"}
	errs := map[string]error{}
	_, errs["observe"] = h.eng.Observe(ctx, dedup.Observation{Collection: long, Text: "Dana likes figs"})
	_, errs["correct"] = h.eng.Correct(ctx, dedup.Observation{Collection: long, Text: "Dana likes figs", Corrects: "7"})
	_, errs["confirm"] = h.eng.Confirm(ctx, dedup.Confirmation{Collection: long, MemoryID: "7"})
	_, errs["memory"] = h.eng.Memory(ctx, long, "", "7")
	_, errs["stats"] = h.eng.Stats(ctx, long, "")
	for op, err := range errs {
		var ie *dedup.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %v (%T), want an InputError", op, err, err)
			continue
		}
		if diff := cmp.Diff(want, ie); diff != "" {
			t.Errorf("%s (-want +got):\n%s", op, diff)
		}
	}
}
