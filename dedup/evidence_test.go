package dedup_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/scoring"
)

func withHeuristics(on bool) option {
	return func(c *dedup.Config, _ *harness) { c.Hearsay.Heuristics = on }
}

// TestHearsayCap: seed 000's reported speech. "I heard Acme is pivoting to
// ML" sent as direct is stored as weak_inference with the attribution
// noted, in the memory, the outcome and the audit record; the cap comes from
// the extractor's attribution when there is one, from the text's cue
// otherwise (and says so), and never raises a source.
func TestHearsayCap(t *testing.T) {
	pr := scoring.DefaultParams()
	e := pr.ExtractorFromModel("gpt-4o")
	tests := []struct {
		name        string
		heuristics  bool
		text        string
		source      string
		attribution string

		wantSource      string
		wantAttribution string // stored
		wantFrom        string // "" = no attribution note in the outcome
		wantCapped      bool
		wantNote        string // part of the insert record's note
	}{
		{name: "the issue's example, by the heuristic", heuristics: true,
			text: "I heard Acme is pivoting to ML", source: "direct",
			wantSource: "weak_inference", wantAttribution: "reported", wantFrom: "heuristic", wantCapped: true,
			wantNote: `hearsay: source direct capped (heuristic cue "i heard")`},
		{name: "the extractor's attribution", text: "Acme is pivoting to ML", source: "direct", attribution: "reported",
			wantSource: "weak_inference", wantAttribution: "reported", wantFrom: "extractor", wantCapped: true,
			wantNote: "hearsay: source direct capped"},
		{name: "hearsay is an alias", text: "Acme is hiring", source: "confirmed", attribution: "hearsay",
			wantSource: "weak_inference", wantAttribution: "reported", wantFrom: "extractor", wantCapped: true,
			wantNote: "hearsay: source confirmed capped"},
		{name: "the extractor's self wins over a cue", heuristics: true,
			text: "Apparently I work at Acme now", source: "direct", attribution: "self",
			wantSource: "direct", wantAttribution: "self"},
		{name: "heuristics off", text: "I heard Acme is pivoting to ML", source: "direct",
			wantSource: "direct"},
		{name: "no cue", heuristics: true, text: "I work at Acme", source: "direct", wantSource: "direct"},
		{name: "below the cap stays", text: "Acme may be hiring", source: "speculation", attribution: "reported",
			wantSource: "speculation", wantAttribution: "reported", wantFrom: "extractor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, withHeuristics(tc.heuristics))
			out := h.observe(t, dedup.Observation{Text: tc.text, Source: tc.source, Attribution: tc.attribution,
				ExtractorModel: "gpt-4o", ObservationID: "o1"})
			m := h.get(t, "mem", out.MemoryID)
			if m.Source != tc.wantSource || m.Attribution != tc.wantAttribution {
				t.Errorf("stored source %q attribution %q, want %q %q", m.Source, m.Attribution, tc.wantSource, tc.wantAttribution)
			}
			want := formula(pr.SourceLevels[tc.wantSource], 0, e, pr.TypePriors["fact"])
			if !near(out.Confidence, want) {
				t.Errorf("confidence %v, want %v", out.Confidence, want)
			}
			switch a := out.Attribution; {
			case tc.wantFrom == "" && a != nil:
				t.Errorf("outcome attribution %+v, want none", a)
			case tc.wantFrom != "" && (a == nil || a.From != tc.wantFrom || a.Capped != tc.wantCapped || a.Attribution != "reported"):
				t.Errorf("outcome attribution %+v, want from %s capped %v", a, tc.wantFrom, tc.wantCapped)
			case tc.wantCapped && a.SourceGiven != tc.source:
				t.Errorf("outcome source given %q, want %q", a.SourceGiven, tc.source)
			}
			recs := h.audit(t, "mem", out.MemoryID)
			if len(recs) != 1 {
				t.Fatalf("audit %+v", recs)
			}
			if !strings.Contains(recs[0].Note, tc.wantNote) || (tc.wantNote == "") != (recs[0].Note == "") {
				t.Errorf("audit note %q, want %q", recs[0].Note, tc.wantNote)
			}
			if tc.wantFrom != "" && (recs[0].Attribution != "reported" || recs[0].AttributionFrom != tc.wantFrom) {
				t.Errorf("audit attribution %q from %q", recs[0].Attribution, recs[0].AttributionFrom)
			}
			// A replay answers the same note.
			again := h.observe(t, dedup.Observation{Text: tc.text, Source: tc.source, Attribution: tc.attribution,
				ExtractorModel: "gpt-4o", ObservationID: "o1"})
			if !again.Replayed || (again.Attribution == nil) != (out.Attribution == nil) {
				t.Errorf("replay %+v", again)
			}
		})
	}
}

// TestHearsayThenFirstHand: a first-hand statement of a fact first heard
// as hearsay lifts it to the stated source and records the attribution.
func TestHearsayThenFirstHand(t *testing.T) {
	h := newHarness(t, withHeuristics(true))
	h.observe(t, dedup.Observation{Text: "Acme is pivoting to ML", Source: "direct", Attribution: "reported", SessionID: "s1"})
	h.clock.set(t0.Add(48 * time.Hour))
	out := h.observe(t, dedup.Observation{Text: "Acme is pivoting to ML", Source: "direct", Attribution: "self", SessionID: "s2"})
	m := h.get(t, "mem", out.MemoryID)
	if m.Source != "direct" || m.Attribution != "self" {
		t.Errorf("after a first-hand statement: source %q attribution %q", m.Source, m.Attribution)
	}
}

func TestAttributionRefused(t *testing.T) {
	h := newHarness(t)
	_, err := h.eng.Observe(context.Background(), dedup.Observation{Collection: "mem", Text: "x y", Attribution: "gossip"})
	var ie *dedup.InputError
	if !errors.As(err, &ie) || ie.Field != "attribution" {
		t.Errorf("err %v, want an input error on attribution", err)
	}
}

// TestContradictionCandidates: seed 001. A pair below the judge band that
// shares two entities and has a cosine in [0.40, 0.75] goes to the judge as
// a possible contradiction; one shared entity, a cosine out of the window
// or no judge leave the observation a new memory, with no call.
func TestContradictionCandidates(t *testing.T) {
	const stored, claim = "Dana works at Acme in Berlin", "Dana works at Initech in Berlin"
	tests := []struct {
		name      string
		judge     bool
		cos       float64 // of each text to the topic: the pair's cosine is about its square
		entities  []string
		wantCalls int64
		want      dedup.Decision
	}{
		{name: "two shared entities, cosine 0.55", judge: true, cos: math.Sqrt(0.55), entities: []string{"dana", "Berlin"},
			wantCalls: 1, want: dedup.DecisionContradiction},
		{name: "one shared entity", judge: true, cos: math.Sqrt(0.55), entities: []string{"Dana", "Initech"},
			wantCalls: 0, want: dedup.DecisionInserted},
		{name: "cosine below the window", judge: true, cos: math.Sqrt(0.30), entities: []string{"Dana", "Berlin"},
			wantCalls: 0, want: dedup.DecisionInserted},
		{name: "no judge", cos: math.Sqrt(0.55), entities: []string{"Dana", "Berlin"}, want: dedup.DecisionInserted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []option
			if tc.judge {
				opts = append(opts, withJudge(func(user string) string {
					if mentions(user, stored) && mentions(user, claim) {
						return verdict("contradicts", "two employers for the same attribute")
					}
					return verdict("different", "")
				}))
			}
			h := newHarness(t, opts...)
			h.emb.on("job", tc.cos, stored, claim)
			first := h.observe(t, dedup.Observation{Text: stored, Source: "direct", Entities: []string{"Dana", "Acme", "Berlin"}})
			h.clock.set(t0.Add(time.Hour))
			out := h.observe(t, dedup.Observation{Text: claim, Source: "direct", Entities: tc.entities})
			if out.Decision != tc.want {
				t.Fatalf("decision %s, want %s (%+v)", out.Decision, tc.want, out)
			}
			var calls int64
			if h.judge != nil {
				calls = h.judge.calls.Load()
			}
			if calls != tc.wantCalls {
				t.Errorf("judge calls %d, want %d", calls, tc.wantCalls)
			}
			if tc.want == dedup.DecisionContradiction {
				if out.Tier != 3 || out.Superseded != first.MemoryID || out.Judge == nil || out.Judge.Verdict != "contradicts" {
					t.Errorf("outcome %+v", out)
				}
				if len(h.judge.bodies) != 1 || !mentions(h.judge.bodies[0], stored) {
					t.Errorf("the judge was sent %q", h.judge.bodies)
				}
			} else if out.Judge != nil {
				t.Errorf("judge info %+v with nothing asked", out.Judge)
			}
		})
	}
}

// TestContradictionPenalty: seed 001's penalty. A stored claim that wins a
// contradiction against a weaker new claim keeps its place but loses 0.15;
// a new claim that wins (a fresher, stronger statement) is not penalised.
func TestContradictionPenalty(t *testing.T) {
	const stored, claim = "Dana lives in Lisbon", "Dana lives in Porto"
	for _, off := range []bool{false, true} {
		name := map[bool]string{false: "on", true: "off"}[off]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, withJudge(func(string) string { return verdict("contradicts", "two cities") }),
				func(c *dedup.Config, _ *harness) { c.Corroboration.Off = off })
			h.emb.on("home", 0.95, stored, claim)
			first := h.observe(t, dedup.Observation{Text: stored, Source: "direct", ExtractorModel: "gpt-4o"})
			out := h.observe(t, dedup.Observation{Text: claim, Source: "speculation"})
			if out.Decision != dedup.DecisionContradiction || out.Superseded != out.MemoryID {
				t.Fatalf("outcome %+v: want the weaker new claim superseded", out)
			}
			m := h.get(t, "mem", first.MemoryID)
			want := first.Confidence - 0.15
			if off {
				want = first.Confidence
			}
			if !near(m.Confidence, want) || m.Contradictions != 1 {
				t.Errorf("stored claim: confidence %v contradictions %d, want %v and 1", m.Confidence, m.Contradictions, want)
			}
			recs := h.audit(t, "mem", first.MemoryID)
			last := recs[len(recs)-1]
			if last.Reason != "contradiction" || (!off && !strings.Contains(last.Note, "contradiction penalty")) {
				t.Errorf("audit record %+v", last)
			}
		})
	}
}

// TestCorroborationBoost: seed 001's boost behind the evidence gate. Each
// similar observation about a shared entity adds 0.05 to the corroborated
// memory, but not above 0.80 before three corroborations.
func TestCorroborationBoost(t *testing.T) {
	texts := []string{"Dana uses Neovim", "Neovim is the editor Dana uses", "Dana edits code in Neovim",
		"Dana writes her code with Neovim"}
	h := newHarness(t)
	h.emb.on("editor", math.Sqrt(0.88), texts...)
	first := h.observe(t, dedup.Observation{Text: texts[0], Source: "direct", ExtractorModel: "gpt-4o",
		MemoryType: "preference", Entities: []string{"Dana", "Neovim"}})
	if !near(first.Confidence, 0.715) {
		t.Fatalf("first confidence %v", first.Confidence)
	}
	want := []struct {
		corroborations int
		confidence     float64
	}{{1, 0.765}, {2, 0.80}, {3, 0.85}}
	for i, w := range want {
		h.observe(t, dedup.Observation{Text: texts[i+1], Source: "strong_inference", Entities: []string{"Neovim"}})
		m := h.get(t, "mem", first.MemoryID)
		if m.Corroborations != w.corroborations || !near(m.Confidence, w.confidence) {
			t.Errorf("after %d: corroborations %d confidence %v, want %d %v", i+1, m.Corroborations, m.Confidence,
				w.corroborations, w.confidence)
		}
	}
	recs := h.audit(t, "mem", first.MemoryID)
	if got := recs[len(recs)-1]; got.Reason != "corroboration" || !near(got.Old, 0.80) || !near(got.New, 0.85) {
		t.Errorf("last audit record %+v", got)
	}
}

// TestRecurringEvent: seed 002. An event seen a fifth time (four
// independent re-observations after the first) is flagged as a probable
// recurring pattern and that sighting adds no confidence; a fact seen as
// often is not flagged.
func TestRecurringEvent(t *testing.T) {
	modalities := []string{"chat", "email", "calendar", "document", "voice", "sms"}
	for _, typ := range []string{"event", "fact"} {
		t.Run(typ, func(t *testing.T) {
			h := newHarness(t)
			var prev dedup.Outcome
			for i, mod := range modalities {
				h.clock.set(t0.Add(time.Duration(i) * 48 * time.Hour))
				out := h.observe(t, dedup.Observation{Text: "Flew to Tokyo for the offsite", MemoryType: typ,
					Source: "direct", SessionID: "s" + mod, Modality: mod})
				sightings := i + 1
				flagged := typ == "event" && sightings >= 5
				if got := len(out.Flags) > 0; got != flagged {
					t.Errorf("sighting %d: flags %v, want flagged %v", sightings, out.Flags, flagged)
				}
				if i > 0 {
					if out.Decision != dedup.DecisionIndependent || out.Observations != i {
						t.Fatalf("sighting %d: %+v", sightings, out)
					}
					if grew := out.Confidence > prev.Confidence; grew == flagged {
						t.Errorf("sighting %d: confidence %v after %v (flagged %v)", sightings, out.Confidence, prev.Confidence, flagged)
					}
				}
				prev = out
			}
			m := h.get(t, "mem", prev.MemoryID)
			if has := len(m.Flags) == 1 && m.Flags[0] == dedup.FlagRecurringEvent; has != (typ == "event") {
				t.Errorf("stored flags %v", m.Flags)
			}
		})
	}
}

// TestContradictionCandidatesBudget: candidates spend the judge's budget
// like any pair; past it the observation is a new memory and the outcome
// says why.
func TestContradictionCandidatesBudget(t *testing.T) {
	h := newHarness(t, withJudge(func(string) string { return verdict("contradicts", "") }),
		func(c *dedup.Config, h *harness) {
			j, err := dedup.NewLLMJudge(dedup.LLMJudgeConfig{BaseURL: h.judge.srv.URL + "/v1", Model: judgeModel,
				APIKey: "sk-test", Timeout: 2 * time.Second, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			c.Judging = mustJudging(t, dedup.JudgingConfig{Judge: j, CacheSize: 1000, CallsPerMinute: 1, Timeout: 2 * time.Second})
		})
	texts := []string{"Dana works at Acme in Berlin", "Dana works at Initech in Berlin", "Dana works at Globex in Berlin"}
	h.emb.on("job", math.Sqrt(0.55), texts...)
	ents := []string{"Dana", "Berlin"}
	h.observe(t, dedup.Observation{Text: texts[0], Source: "direct", Entities: ents})
	if out := h.observe(t, dedup.Observation{Text: texts[1], Source: "direct", Entities: ents}); out.Decision != dedup.DecisionContradiction {
		t.Fatalf("within the budget: %+v", out)
	}
	out := h.observe(t, dedup.Observation{Text: texts[2], Source: "direct", Entities: ents})
	if out.Decision != dedup.DecisionInserted || out.Judge == nil || out.Judge.Fallback != "budget" {
		t.Errorf("over the budget: %+v (judge %+v)", out, out.Judge)
	}
	if n := h.judge.calls.Load(); n != 1 {
		t.Errorf("judge calls %d, want 1", n)
	}
}

// TestReassertedClaimLeavesTheArchive: a claim consolidation archived, then
// superseded, then asserted again (an old restatement: no reinforcement of
// its own) comes out of supersession and out of the archive together, so
// no memory is ever retrievable yet stored archived.
func TestReassertedClaimLeavesTheArchive(t *testing.T) {
	const stored, claim = "Dana lives in Lisbon", "Dana lives in Porto"
	h := newHarness(t, withJudge(func(string) string { return verdict("contradicts", "two cities") }))
	h.emb.on("home", 0.95, stored, claim)
	a := h.observe(t, dedup.Observation{Text: stored, Source: "speculation", SessionID: "s1", ObservedAt: t0})
	wait := true
	if _, err := h.client.SetPayload(context.Background(), &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
		Payload:        map[string]*qdrant.Value{"tier": qdrant.NewValueString("archived"), "retrievable": qdrant.NewValueBool(false)},
		PointsSelector: qdrant.NewPointsSelector(qdrant.NewID(a.MemoryID))}); err != nil {
		t.Fatal(err)
	}
	h.clock.set(t0.Add(time.Hour))
	b := h.observe(t, dedup.Observation{Text: claim, Source: "strong_inference", SessionID: "s2"})
	if b.Superseded != a.MemoryID {
		t.Fatalf("the archived speculation should lose: %+v", b)
	}
	h.clock.set(t0.Add(2 * time.Hour))
	h.observe(t, dedup.Observation{Text: stored, Source: "direct", ExtractorModel: "gpt-4o", SessionID: "s1", ObservedAt: t0})
	for _, id := range []string{a.MemoryID, b.MemoryID} {
		m := h.get(t, "mem", id)
		if m.Retrievable && m.Tier == scoring.TierArchived {
			t.Errorf("%s is retrievable yet stored archived: the read path drops it until the next consolidation", id)
		}
	}
}

// TestOldDuplicateFoldedDoesNotRevive: folding an older duplicate (another
// tool's copy of the text) into an archived memory, on an old restatement,
// leaves the archive alone; a fresher duplicate brings it back.
func TestOldDuplicateFoldedDoesNotRevive(t *testing.T) {
	for _, tt := range []struct {
		name      string
		copyAge   time.Duration // the copy's last observation, before the memory's
		wantTier  scoring.Tier
		wantRetrv bool
	}{
		{"older copy", 24 * time.Hour, scoring.TierArchived, false},
		{"fresher copy", -24 * time.Hour, scoring.TierActive, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := context.Background()
			h.clock.set(t0.Add(48 * time.Hour))
			out := h.observe(t, dedup.Observation{Text: "Dana collects stamps", Source: "direct", SessionID: "s1", ObservedAt: t0.Add(48 * time.Hour)})
			orig := h.get(t, "mem", out.MemoryID)
			cp := orig
			cp.CreatedAt, cp.LastObservedAt = orig.CreatedAt.Add(-tt.copyAge), orig.LastObservedAt.Add(-tt.copyAge)
			cp.SessionIDs = []string{"other-tool"}
			vecs, err := h.emb.Embed(ctx, []string{"Dana collects stamps"})
			if err != nil {
				t.Fatal(err)
			}
			wait := true
			if _, err := h.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: &wait, Points: []*qdrant.PointStruct{{
				Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectorsDense(vecs[0]), Payload: h.codec.Encode(&cp)}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.client.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
				Payload:        map[string]*qdrant.Value{"tier": qdrant.NewValueString("archived"), "retrievable": qdrant.NewValueBool(false)},
				PointsSelector: qdrant.NewPointsSelector(qdrant.NewID(out.MemoryID))}); err != nil {
				t.Fatal(err)
			}
			// An old transcript: the same session, an old time.
			h.observe(t, dedup.Observation{Text: "Dana collects stamps", Source: "direct", SessionID: "s1", ObservedAt: t0})
			m := h.get(t, "mem", out.MemoryID)
			if m.Tier != tt.wantTier || m.Retrievable != tt.wantRetrv {
				t.Errorf("after folding the copy: tier %v retrievable %v, want %v %v", m.Tier, m.Retrievable, tt.wantTier, tt.wantRetrv)
			}
			if cp := h.get(t, "mem", "7"); cp.SupersededBy != out.MemoryID {
				t.Errorf("the copy was not folded in: superseded_by %q", cp.SupersededBy)
			}
		})
	}
}
