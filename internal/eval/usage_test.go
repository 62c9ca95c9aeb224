package eval

import (
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

func useSet(reads int64) *Set {
	yes, no := true, false
	mk := func(id, role string, correct *bool) Memory {
		return Memory{ID: id, Role: role, Correct: correct, Payload: map[string]*qdrant.Value{
			"access_counts": qdrant.NewValueFromFields(map[string]*qdrant.Value{"r1": qdrant.NewValueInt(reads)}),
		}}
	}
	return &Set{Memories: []Memory{mk("1", "answer", &yes), mk("2", "outdated", &no), mk("3", "popular", &yes), mk("4", "answer", nil)}}
}

func counts(m *Memory) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m.Payload["access_counts"].GetStructValue().GetFields() {
		out[k] = v.GetIntegerValue()
	}
	return out
}

// TestSimulateUse: returned leaves the set's reads; used replaces them with
// draws whose rates follow the model; both adds them; draws repeat for a
// seed.
func TestSimulateUse(t *testing.T) {
	const reads = 2000
	keys := memory.DefaultKeys()
	model := DefaultUseModel()

	s := useSet(reads)
	SimulateUse(s, keys, SignalReturned, model, 1)
	if c := counts(&s.Memories[0]); len(c) != 1 || c["r1"] != reads {
		t.Errorf("returned changed the counts: %v", c)
	}

	used := useSet(reads)
	SimulateUse(used, keys, SignalUsed, model, 1)
	wantRate := []float64{model.Correct, model.Wrong, model.Popular, model.Unknown}
	for i := range used.Memories {
		c := counts(&used.Memories[i])
		if _, ok := c["r1"]; ok {
			t.Errorf("memory %d: used kept the reads: %v", i, c)
		}
		rate := float64(c[UsedKey]) / reads
		if rate < wantRate[i]-0.05 || rate > wantRate[i]+0.05 {
			t.Errorf("memory %d: use rate %.3f, want about %.2f", i, rate, wantRate[i])
		}
	}

	both := useSet(reads)
	SimulateUse(both, keys, SignalBoth, model, 1)
	for i := range both.Memories {
		c := counts(&both.Memories[i])
		if c["r1"] != reads || c[UsedKey] != counts(&used.Memories[i])[UsedKey] {
			t.Errorf("memory %d: both %v, want the reads and the same draws as used", i, c)
		}
	}

	other := useSet(reads)
	SimulateUse(other, keys, SignalUsed, model, 2)
	same := true
	for i := range other.Memories {
		same = same && counts(&other.Memories[i])[UsedKey] == counts(&used.Memories[i])[UsedKey]
	}
	if same {
		t.Error("another seed drew the same uses")
	}
}

func TestParseAccessSignal(t *testing.T) {
	for _, s := range []string{"returned", "used", "both"} {
		if got, err := ParseAccessSignal(s); err != nil || string(got) != s {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ParseAccessSignal("reads"); err == nil {
		t.Error("reads accepted")
	}
}
