package scoring

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// TestWorkedNumbers pins every worked number listed at the end of docs/scoring.md, to 3 decimals.
func TestWorkedNumbers(t *testing.T) {
	p := DefaultParams()
	scenarioC := Evidence{Components: Components{Source: 0.30, Observations: 0, Extractor: 0.65, Type: 0.80}}
	scenarioC.Confidence = p.Grounded(scenarioC.Components, GroundingSupported)

	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"scenario A", p.Grounded(Components{0.95, 3, 0.90, 0.90}, GroundingSupported), 0.859},
		{"scenario B", p.Grounded(Components{0.70, 0, 0.80, 0.75}, GroundingSupported), 0.590},
		{"scenario C", scenarioC.Confidence, 0.378},
		{"C plus one independent observation", p.Reobserve(scenarioC, scenarioC, true).Confidence, 0.459},
		{"C confirmed", p.Confirm(scenarioC).Confidence, 0.684},
		{"C partial grounding", p.Grounded(scenarioC.Components, GroundingPartial), 0.300},
		{"spam, 1000 sessions", p.Grounded(Components{0.20, 1000, 0.50, 0.50}, GroundingSupported), 0.440},
		{"logprobs all -0.1", ExtractorFromLogprob(-0.1), 0.905},
		{"logprobs all -2.5", ExtractorFromLogprob(-2.5), 0.082},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := round3(tt.got); got != tt.want {
				t.Errorf("got %.4f (%.3f), want %.3f", tt.got, got, tt.want)
			}
		})
	}
}

func TestRepetitionValues(t *testing.T) {
	// docs/scoring.md; the seeds' table (0.307/0.478/0.625) does not follow from
	// the formula, which is what we implement.
	want := map[int]float64{0: 0, 1: 0.4094, 2: 0.5235, 3: 0.5809, 5: 0.6418, 10: 0.7057, 100: 0.8219, 1000: 0.8736}
	for n, w := range want {
		if got := math.Round(Repetition(n)*1e4) / 1e4; got != w {
			t.Errorf("r(%d) = %.4f, want %.4f", n, got, w)
		}
	}
	if Repetition(-5) != 0 {
		t.Errorf("r(-5) = %v, want 0", Repetition(-5))
	}
}

func TestExtractorByModelName(t *testing.T) {
	p := DefaultParams()
	tests := []struct {
		model string
		want  float64
	}{
		{"claude-3-5-sonnet-20241022", 0.90},
		{"Claude Opus 4", 0.90},
		{"anthropic/claude-sonnet-4.5", 0.90},
		{"gpt-4o-mini", 0.85},
		{"GPT-4", 0.85},
		{"gpt-5", 0.85},
		{"o3", 0.85},
		{"claude-3-haiku-20240307", 0.80},
		{"gpt-3.5-turbo", 0.65},
		{"llama-3.1-8b-instruct", 0.65},
		{"", 0.65},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if got := p.Extractor(tt.model, 0, false); got != tt.want {
				t.Errorf("Extractor(%q) = %v, want %v", tt.model, got, tt.want)
			}
		})
	}
	t.Run("logprob wins over the table", func(t *testing.T) {
		if got := round3(p.Extractor("claude-3-5-sonnet", -2.5, true)); got != 0.082 {
			t.Errorf("got %v, want 0.082", got)
		}
	})
	t.Run("positive logprob clamps to 1", func(t *testing.T) {
		if got := p.Extractor("", 0.5, true); got != 1 {
			t.Errorf("got %v, want 1", got)
		}
	})
	t.Run("NaN logprob is untrusted", func(t *testing.T) {
		if got := p.Extractor("", math.NaN(), true); got != 0 {
			t.Errorf("got %v, want 0", got)
		}
	})
}

func TestGroundingPenalty(t *testing.T) {
	g := DefaultParams().Grounding
	tests := []struct {
		name string
		conf float64
		gr   Grounding
		want float64
	}{
		{"supported keeps", 0.7, GroundingSupported, 0.7},
		{"partial subtracts 0.15", 0.7, GroundingPartial, 0.55},
		{"unknown subtracts 0.10", 0.7, GroundingUnknown, 0.6},
		{"floor stops the penalty at 0.30", 0.378, GroundingPartial, 0.30},
		{"floor never raises", 0.2, GroundingPartial, 0.2},
		{"not_supported penalised like partial", 0.7, GroundingNotSupported, 0.55},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.Apply(tt.conf, tt.gr); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Apply(%v, %v) = %v, want %v", tt.conf, tt.gr, got, tt.want)
			}
		})
	}
}

// randomComponents draws components over and slightly beyond their ranges, so
// the clamping is exercised too.
func randomComponents(r *rand.Rand) Components {
	f := func() float64 { return r.Float64()*1.2 - 0.1 }
	return Components{Source: f(), Observations: r.IntN(2000) - 5, Extractor: f(), Type: f()}
}

func TestPropertyConfidenceRangeAndMonotone(t *testing.T) {
	p := DefaultParams()
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		c := randomComponents(r)
		base := p.Weights.Confidence(c)
		if !(base >= 0 && base <= 1) {
			t.Fatalf("conf(%+v) = %v, outside [0,1]", c, base)
		}
		d := r.Float64() * 0.3
		up := []struct {
			name string
			c    Components
		}{
			{"s", Components{c.Source + d, c.Observations, c.Extractor, c.Type}},
			{"n", Components{c.Source, c.Observations + 1 + r.IntN(50), c.Extractor, c.Type}},
			{"e", Components{c.Source, c.Observations, c.Extractor + d, c.Type}},
			{"t", Components{c.Source, c.Observations, c.Extractor, c.Type + d}},
		}
		for _, u := range up {
			if got := p.Weights.Confidence(u.c); got < base {
				t.Fatalf("conf decreased when %s rose: %+v -> %v, %+v -> %v", u.name, c, base, u.c, got)
			}
		}
	}
}

func TestPropertyRepetition(t *testing.T) {
	prev := Repetition(0)
	for n := 1; n <= 100000; n++ {
		r := Repetition(n)
		if !(r > prev) {
			t.Fatalf("r(%d) = %v not above r(%d) = %v", n, r, n-1, prev)
		}
		if !(r < 1) {
			t.Fatalf("r(%d) = %v, want below 1", n, r)
		}
		prev = r
	}
	if r := Repetition(math.MaxInt); !(r < 1) {
		t.Fatalf("r(MaxInt) = %v, want below 1", r)
	}
}

func TestPropertyGroundingNeverRaises(t *testing.T) {
	g := DefaultParams().Grounding
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		conf := r.Float64()
		for _, gr := range []Grounding{GroundingSupported, GroundingPartial, GroundingUnknown, GroundingNotSupported} {
			got := g.Apply(conf, gr)
			if got > conf {
				t.Fatalf("Apply(%v, %v) = %v raised the confidence", conf, gr, got)
			}
			if got < math.Min(conf, g.Floor) {
				t.Fatalf("Apply(%v, %v) = %v went below min(conf, floor)", conf, gr, got)
			}
		}
	}
}

func randomEvidence(p *Params, r *rand.Rand) Evidence {
	c := Components{Source: r.Float64(), Observations: r.IntN(50), Extractor: r.Float64(), Type: r.Float64()}
	gr := Grounding(r.IntN(3))
	conf := p.Grounded(c, gr)
	if r.IntN(3) == 0 { // a stored confidence that drifted from the fields
		conf = r.Float64() * p.MaxConfidence
	}
	return Evidence{Components: c, Grounding: gr, Confidence: conf}
}

func TestPropertyConfirm(t *testing.T) {
	p := DefaultParams()
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		m := randomEvidence(p, r)
		got := p.Confirm(m)
		if got.Confidence < m.Confidence {
			t.Fatalf("confirm lowered %v to %v (%+v)", m.Confidence, got.Confidence, m)
		}
		if got.Confidence > p.MaxConfidence {
			t.Fatalf("confirm gave %v above %v", got.Confidence, p.MaxConfidence)
		}
		if got.Source < p.ConfirmSource || got.Observations != m.Observations+1 {
			t.Fatalf("confirm of %+v gave s=%v n=%d", m, got.Source, got.Observations)
		}
	}
	t.Run("clamped at 0.99", func(t *testing.T) {
		top := Evidence{Components: Components{1, 100000, 1, 1}}
		top.Confidence = p.Grounded(top.Components, GroundingSupported)
		w := p.Weights
		w.Repetition, w.Source = 0.05, 0.60 // weights where the formula can exceed 0.99
		q := *p
		q.Weights = w
		if got := q.Confirm(top).Confidence; got != 0.99 {
			t.Errorf("got %v, want 0.99", got)
		}
	})
}

func TestPropertyMerge(t *testing.T) {
	p := DefaultParams()
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 20000; i++ {
		a, b := randomEvidence(p, r), randomEvidence(p, r)
		got := p.Merge(a, b)
		if got.Confidence < a.Confidence || got.Confidence < b.Confidence {
			t.Fatalf("merge(%v, %v) = %v below an input", a.Confidence, b.Confidence, got.Confidence)
		}
		if got.Observations != a.Observations+b.Observations {
			t.Fatalf("merge n = %d, want %d", got.Observations, a.Observations+b.Observations)
		}
	}
	t.Run("seed 002: n=3 and n=2 give n=5 with the stronger components", func(t *testing.T) {
		a := Evidence{Components: Components{0.95, 3, 0.90, 0.90}}
		a.Confidence = p.Grounded(a.Components, GroundingSupported)
		b := Evidence{Components: Components{0.50, 2, 0.65, 0.80}}
		b.Confidence = p.Grounded(b.Components, GroundingSupported)
		got := p.Merge(b, a)
		want := p.Grounded(Components{0.95, 5, 0.90, 0.90}, GroundingSupported)
		if got.Observations != 5 || got.Source != 0.95 || math.Abs(got.Confidence-want) > 1e-12 {
			t.Errorf("got %+v, want n=5 s=0.95 conf=%v", got, want)
		}
	})
}

func TestReobserve(t *testing.T) {
	p := DefaultParams()
	stored := Evidence{Components: Components{0.70, 0, 0.80, 0.75}}
	stored.Confidence = p.Grounded(stored.Components, GroundingSupported)
	t.Run("restatement keeps n and confidence", func(t *testing.T) {
		got := p.Reobserve(stored, stored, false)
		if got.Observations != 0 || got.Confidence != stored.Confidence {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("stronger observation lends its components", func(t *testing.T) {
		obs := Evidence{Components: Components{0.95, 7, 0.90, 0.75}} // the observation's own n is ignored
		got := p.Reobserve(stored, obs, true)
		want := p.Grounded(Components{0.95, 1, 0.90, 0.75}, GroundingSupported)
		if got.Observations != 1 || got.Source != 0.95 || math.Abs(got.Confidence-want) > 1e-12 {
			t.Errorf("got %+v, want n=1 s=0.95 conf=%v", got, want)
		}
	})
	t.Run("weaker observation never lowers", func(t *testing.T) {
		obs := Evidence{Components: Components{0.30, 0, 0.65, 0.75}, Grounding: GroundingPartial}
		got := p.Reobserve(stored, obs, true)
		if got.Source != 0.70 || got.Confidence < stored.Confidence {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("dark mode in five sessions gives n=4", func(t *testing.T) {
		m := stored
		for i := 0; i < 4; i++ {
			m = p.Reobserve(m, stored, true)
		}
		if m.Observations != 4 {
			t.Errorf("n = %d, want 4", m.Observations)
		}
	})
}

func TestFreshness(t *testing.T) {
	if got := Freshness(0, 90); got != 1 {
		t.Errorf("f(0) = %v, want 1", got)
	}
	for _, hl := range []float64{1, 30, 90, 365} {
		if got := Freshness(hl, hl); math.Abs(got-0.5) > 1e-12 {
			t.Errorf("f(half-life %v) = %v, want 0.5", hl, got)
		}
	}
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	if got := AgeDays(now.Add(48*time.Hour), now); got != 0 {
		t.Errorf("future timestamp age = %v, want 0", got)
	}
	if got := AgeDays(now.Add(-36*time.Hour), now); got != 1.5 {
		t.Errorf("age = %v, want 1.5", got)
	}
	if got := Freshness(10, 0); got != 1 {
		t.Errorf("zero half-life = %v, want 1 (never decays)", got)
	}
}

func TestHalfLife(t *testing.T) {
	d := DefaultParams().Decay
	d.TypeCategories = map[string]string{"preference": "preference"}
	tests := []struct {
		name, category, typ string
		want                float64
		known               bool
	}{
		{"category", "price", "fact", 60, true},
		{"project status", "project_status", "", 30, true},
		{"unknown category falls back", "gossip", "fact", 90, false},
		{"type map", "", "preference", 365, true},
		{"default", "", "fact", 90, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, known := d.HalfLife(tt.category, tt.typ)
			if got != tt.want || known != tt.known {
				t.Errorf("HalfLife(%q, %q) = %v, %v; want %v, %v", tt.category, tt.typ, got, known, tt.want, tt.known)
			}
		})
	}
}

func TestDecayFloorExamples(t *testing.T) {
	p := DefaultParams()
	tests := []struct {
		conf float64
		days float64 // docs/scoring.md
	}{
		{0.85, 217.4},
		{0.45, 48.7},
	}
	for _, tt := range tests {
		got := p.Decay.DaysToArchive(tt.conf, 90)
		if math.Abs(got-tt.days) > 0.05 {
			t.Errorf("conf %.2f within its floor for %.2f days, want ~%.1f", tt.conf, got, tt.days)
		}
		f := func(days float64) float64 { return Freshness(days, 90) }
		if !p.WithinFloor(tt.conf, f(tt.days-0.1), false) {
			t.Errorf("conf %.2f past its floor just before %.1f days", tt.conf, tt.days)
		}
		if p.WithinFloor(tt.conf, f(tt.days+0.1), false) {
			t.Errorf("conf %.2f still within its floor just after %.1f days", tt.conf, tt.days)
		}
	}
	if got := p.Decay.DecayFloor(1); got != 0 {
		t.Errorf("floor(1) = %v, want 0", got)
	}
	if got := p.Decay.DecayFloor(0); got != 1 {
		t.Errorf("floor(0) = %v, want 1 (clamped)", got)
	}
}

func TestProtectedNeverArchivedByDecay(t *testing.T) {
	p := DefaultParams()
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 5000; i++ {
		in := Inputs{
			Components:    Components{Source: 0.95, Observations: 3 + r.IntN(20), Extractor: 0.9, Type: 0.9},
			Confidence:    0.80 + r.Float64()*0.19,
			HasConfidence: true,
			HalfLife:      1 + r.Float64()*365,
			LastObserved:  now.Add(-time.Duration(r.IntN(1e6)) * time.Hour),
		}
		s := p.Evaluate(&in, 1, now)
		if !s.Flags.Has(FlagProtected) || !s.Flags.Has(FlagWithinFloor) {
			t.Fatalf("protected memory past its floor: %+v -> %+v", in, s)
		}
		if s.Tier > TierDormant {
			t.Fatalf("protected memory reached tier %v", s.Tier)
		}
	}
	// The same memory with n = 2 is not protected: its tier turns archived.
	in := Inputs{Components: Components{0.95, 2, 0.9, 0.9}, Confidence: 0.85, HasConfidence: true, HalfLife: 90, LastObserved: now.AddDate(-3, 0, 0)}
	if s := p.Evaluate(&in, 1, now); s.Flags.Has(FlagWithinFloor) || s.Flags.Has(FlagProtected) || s.Tier != TierArchived {
		t.Errorf("unprotected 3-year-old memory still within its floor: %+v", s)
	}
}

func TestAccessAndWeight(t *testing.T) {
	if AccessBoost(0.1, 0) != 1 || AccessBoost(0.1, -3) != 1 {
		t.Errorf("boost of no accesses must be 1")
	}
	if got := AccessBoost(0.1, 5); math.Abs(got-(1+0.1*Repetition(5))) > 1e-12 {
		t.Errorf("boost(5) = %v, want 1 + 0.1 r(5)", got)
	}
	if got := AccessBoost(0.1, math.MaxInt64); got > 1.1 || got < 1.09 {
		t.Errorf("boost of every read = %v, want just under 1.1", got)
	}
	if got := AccessBoost(0, 1000); got != 1 {
		t.Errorf("boost at access weight 0 = %v, want 1", got)
	}
	if got := Weight(0.8, 0.5, 2); got != 0.8 {
		t.Errorf("weight = %v, want 0.8", got)
	}
}

func TestFreshnessFactorAndFocus(t *testing.T) {
	tests := []struct {
		name                     string
		weight, focus, fresh, ff float64
	}{
		{"fresh", 0.7, 1, 1, 1},
		{"old, full focus", 0.7, 1, 0, 0.3},
		{"old, no focus", 0.7, 0, 0, 1},
		{"half, half focus", 0.5, 0.5, 0.5, 0.875},
		{"out of range clamps", 2, 2, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FreshnessFactor(tt.weight, tt.focus, tt.fresh); math.Abs(got-tt.ff) > 1e-12 {
				t.Errorf("FreshnessFactor(%v, %v, %v) = %v, want %v", tt.weight, tt.focus, tt.fresh, got, tt.ff)
			}
		})
	}
	p := DefaultParams()
	p.FocusFloor = 0.2
	foci := []struct {
		name            string
		top, pool, want float64
	}{
		{"best matches as old as the rest", 0.3, 0.3, 0.2},
		{"best matches older", 0.1, 0.3, 0.2},
		{"best matches all new", 1, 0.3, 1},
		{"half way", 0.65, 0.3, 0.2 + 0.8*0.5},
		{"everything new", 1, 1, 0.2},
	}
	for _, tt := range foci {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Focus(tt.top, tt.pool); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Focus(%v, %v) = %v, want %v", tt.top, tt.pool, got, tt.want)
			}
		})
	}
}

func TestTiersAndBuckets(t *testing.T) {
	p := DefaultParams()
	tiers := []struct {
		c, f      float64
		protected bool
		want      Tier
	}{
		{0.9, 1, false, TierActive},
		{0.6, 1, false, TierDormant}, // active is strictly above 0.6
		{0.3, 1, false, TierDormant},
		{0.29, 1, false, TierStale},
		{0.1, 1, false, TierStale},
		{0.09, 1, false, TierArchived},
		{0.9, 0.05, false, TierArchived},
		{0.9, 0.05, true, TierDormant},
		{0.9, 0.2, true, TierDormant},
	}
	for _, tt := range tiers {
		if got := p.TierOf(tt.c, tt.f, tt.protected); got != tt.want {
			t.Errorf("TierOf(%v, %v, %v) = %v, want %v", tt.c, tt.f, tt.protected, got, tt.want)
		}
	}
	buckets := []struct {
		c    float64
		want Bucket
	}{{0.8, BucketHigh}, {0.79, BucketMedium}, {0.5, BucketMedium}, {0.49, BucketLow}}
	for _, tt := range buckets {
		if got := p.BucketOf(tt.c); got != tt.want {
			t.Errorf("BucketOf(%v) = %v, want %v", tt.c, got, tt.want)
		}
	}
}

func TestDefaultParamsValid(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	p.Weights.Source = 0.5
	p.RenderGate = 1.5
	p.Decay.HalfLives["price"] = -1
	err := p.Validate()
	for _, want := range []string{"weights: sum is 1.05", "gates.render: 1.5 is outside [0, 1]", "decay.half_lives.price: -1 is not positive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}
