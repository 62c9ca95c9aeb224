package dedup_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memrank/memrank/dedup"
)

// TestWhoSaidWhatOnWrite: no tier folds statements whose subjects differ,
// and similarity alone never folds a differing claim (docs/write-path.md,
// "Who said what"). Every pair is placed at cosine ~0.98, above the
// same-fact threshold, so only the claim rules keep them apart.
func TestWhoSaidWhatOnWrite(t *testing.T) {
	type obs struct {
		text, speaker string
		entities      []string
	}
	tests := []struct {
		name        string
		first, then obs
		want        dedup.Decision // of the second observation
		sameMemory  bool
		contradicts bool // a contradiction recorded on both, both kept
	}{
		{name: "the same words from two speakers are two memories",
			first: obs{text: "That's awesome!", speaker: "Caroline"}, then: obs{text: "That's awesome!", speaker: "Melanie"},
			want: dedup.DecisionInserted},
		{name: "the same words from one speaker are one memory",
			first: obs{text: "That's awesome!", speaker: "Caroline"}, then: obs{text: "That's awesome!", speaker: "Caroline"},
			want: dedup.DecisionRestatement, sameMemory: true},
		{name: "two speakers' first-person statements, named by a leading Name:",
			first: obs{text: "Caroline: I went hiking with my dog on Sunday"}, then: obs{text: "Melanie: I went hiking with my dog last Sunday"},
			want: dedup.DecisionInserted},
		{name: "two speakers' first-person statements, named by speaker",
			first: obs{text: "I went hiking with my dog on Sunday", speaker: "Caroline"}, then: obs{text: "I went hiking with my dog last Sunday", speaker: "Melanie"},
			want: dedup.DecisionInserted},
		{name: "statements about different entities",
			first: obs{text: "Wrote us a letter", entities: []string{"Laura"}}, then: obs{text: "Wrote it", entities: []string{"Cindy"}},
			want: dedup.DecisionInserted},
		{name: "the same claim about one subject from two speakers is independent",
			first: obs{text: "Bob moved to Berlin in the spring", speaker: "Ann", entities: []string{"Bob"}},
			then:  obs{text: "Bob moved to Berlin this spring", speaker: "Cy", entities: []string{"bob"}},
			want:  dedup.DecisionIndependent, sameMemory: true},
		{name: "another city", first: obs{text: "Bob lives in Berlin"}, then: obs{text: "Bob lives in Munich"},
			want: dedup.DecisionInserted},
		{name: "another name", first: obs{text: "Her manager is Priya"}, then: obs{text: "Her manager is Tom now"},
			want: dedup.DecisionInserted},
		{name: "another number", first: obs{text: "Has 2 kids"}, then: obs{text: "Has three kids"},
			want: dedup.DecisionInserted},
		{name: "a negation: both kept, the contradiction recorded",
			first: obs{text: "I work at Acme"}, then: obs{text: "I don't work at Acme"},
			want: dedup.DecisionInserted, contradicts: true},
		{name: "a name the other text says elsewhere is a paraphrase",
			first: obs{text: "Dana uses Neovim"}, then: obs{text: "Neovim is the editor Dana uses"},
			want: dedup.DecisionIndependent, sameMemory: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.emb.on("pair", 0.99, tc.first.text, tc.then.text)
			first := h.observe(t, dedup.Observation{Text: tc.first.text, Speaker: tc.first.speaker, Entities: tc.first.entities,
				Source: "direct", SessionID: "s1"})
			h.clock.set(t0.Add(2 * time.Hour))
			out := h.observe(t, dedup.Observation{Text: tc.then.text, Speaker: tc.then.speaker, Entities: tc.then.entities,
				Source: "direct", SessionID: "s2"})
			if out.Decision != tc.want || (out.MemoryID == first.MemoryID) != tc.sameMemory {
				t.Fatalf("second observation: %s into %s (first %s); want %s, same memory %v",
					out.Decision, out.MemoryID, first.MemoryID, tc.want, tc.sameMemory)
			}
			if !tc.sameMemory && h.count(t, "mem") != 2 {
				t.Errorf("%d memories stored, want 2", h.count(t, "mem"))
			}
			a, b := h.get(t, "mem", first.MemoryID), h.get(t, "mem", out.MemoryID)
			if tc.sameMemory {
				if out.Decision == dedup.DecisionIndependent && a.Observations != 1 {
					t.Errorf("observations %d, want 1", a.Observations)
				}
				return
			}
			if a.SupersededBy != "" || b.SupersededBy != "" || !a.Retrievable || !b.Retrievable {
				t.Errorf("both stay live: %+v / %+v", a, b)
			}
			wantC := 0
			if tc.contradicts {
				wantC = 1
				if out.Contradicts != first.MemoryID {
					t.Errorf("contradicts %q, want %s", out.Contradicts, first.MemoryID)
				}
				for _, id := range []string{first.MemoryID, out.MemoryID} {
					var reasons []string
					for _, r := range h.audit(t, "mem", id) {
						reasons = append(reasons, r.Reason)
					}
					if !slices.Contains(reasons, "contradiction_unresolved") {
						t.Errorf("audit of %s: %v, want a contradiction_unresolved record", id, reasons)
					}
				}
			} else if out.Contradicts != "" {
				t.Errorf("contradicts %q, want none", out.Contradicts)
			}
			if a.Contradictions != wantC || b.Contradictions != wantC {
				t.Errorf("contradictions %d and %d, want %d each", a.Contradictions, b.Contradictions, wantC)
			}
		})
	}
}

// TestSpeakerKeepsIDsApart: the same words from two speakers get ids of
// their own, and each memory keeps its speaker.
func TestSpeakerKeepsIDsApart(t *testing.T) {
	h := newHarness(t)
	a := h.observe(t, dedup.Observation{Text: "That's awesome!", Speaker: "Caroline", Source: "direct", SessionID: "s1"})
	b := h.observe(t, dedup.Observation{Text: "That's awesome!", Speaker: "Melanie", Source: "direct", SessionID: "s2"})
	if a.MemoryID == b.MemoryID || a.Decision != dedup.DecisionInserted || b.Decision != dedup.DecisionInserted {
		t.Fatalf("%+v then %+v: want two memories", a, b)
	}
	for id, want := range map[string]string{a.MemoryID: "Caroline", b.MemoryID: "Melanie"} {
		if m := h.get(t, "mem", id); m.Speaker != want {
			t.Errorf("speaker %q, want %s", m.Speaker, want)
		}
	}
	// Without a speaker the id is the text's, as before: a store written
	// before speakers converges on the ids it has.
	plain := newHarness(t).observe(t, dedup.Observation{Text: "That's awesome!", Source: "direct"})
	if plain.MemoryID == a.MemoryID || plain.MemoryID == b.MemoryID {
		t.Errorf("the anonymous id %s is a speaker's", plain.MemoryID)
	}
	if m := newHarness(t).observe(t, dedup.Observation{Text: "That's  awesome!", Source: "direct"}); m.MemoryID != plain.MemoryID {
		t.Errorf("anonymous ids %s and %s for one normalised text", m.MemoryID, plain.MemoryID)
	}
}

// TestCorrectionNeverLosesItsText: a correction folds only into a memory
// that states its claim; "I work at Initech now, not Acme", near "I don't
// work at Acme", is stored and supersedes the corrected memory.
func TestCorrectionNeverLosesItsText(t *testing.T) {
	const pos, neg, fix = "I work at Acme", "I don't work at Acme", "I work at Initech now, not Acme"
	tests := []struct {
		name      string
		text      string
		wantFolds bool // into the stored negation
	}{
		{name: "a new fact is stored", text: fix},
		{name: "the negation restated folds into it", text: "I do not work at Acme", wantFolds: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.emb.on("acme", 0.99, pos, neg, tc.text)
			orig := h.observe(t, dedup.Observation{Text: pos, Source: "direct", SessionID: "s1"})
			h.clock.set(t0.Add(2 * time.Hour))
			negated := h.observe(t, dedup.Observation{Text: neg, Source: "direct", SessionID: "s2"})
			h.clock.set(t0.Add(4 * time.Hour))
			out, err := h.eng.Correct(context.Background(), dedup.Observation{Collection: "mem", Corrects: orig.MemoryID,
				Text: tc.text, Source: "direct", SessionID: "s3"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Decision != dedup.DecisionCorrected || out.Superseded != orig.MemoryID {
				t.Fatalf("correct: %+v", out)
			}
			if folded := out.MemoryID == negated.MemoryID; folded != tc.wantFolds {
				t.Fatalf("correction into %s (negation %s): folded %v, want %v", out.MemoryID, negated.MemoryID, folded, tc.wantFolds)
			}
			m := h.get(t, "mem", out.MemoryID)
			if !tc.wantFolds && m.Text != tc.text {
				t.Errorf("the correction's memory says %q, want %q", m.Text, tc.text)
			}
			if old := h.get(t, "mem", orig.MemoryID); old.SupersededBy != out.MemoryID || old.Retrievable {
				t.Errorf("corrected memory: superseded_by %q retrievable %v, want %s and false", old.SupersededBy, old.Retrievable, out.MemoryID)
			}
		})
	}
}
