package eval

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

// AccessSignal says which reads feed the access boost in an evaluation:
// the set's reads as they are ("returned", what memrank counts), only the
// simulated uses ("used": the agent used the memory and the user did not
// correct it, POST /v1/memories/{id}/used), or both added up.
type AccessSignal string

// Access signals.
const (
	SignalReturned AccessSignal = "returned"
	SignalUsed     AccessSignal = "used"
	SignalBoth     AccessSignal = "both"
)

// ParseAccessSignal reads returned, used or both.
func ParseAccessSignal(s string) (AccessSignal, error) {
	switch a := AccessSignal(s); a {
	case SignalReturned, SignalUsed, SignalBoth:
		return a, nil
	}
	return "", fmt.Errorf("%q: want returned, used or both", s)
}

// UseModel is how often a returned memory is used. A set records how often
// each memory was returned (access_counts), not what the agent did with it,
// so the uses are drawn: each past read of a memory is a use with the
// probability of its kind. The defaults say what an agent and a user do:
// a correct memory returned for its own topic is mostly used; one read
// constantly by unrelated queries (role "popular") is rarely used; a wrong
// one (correct false: outdated, superseded, a wrong guess) is corrected by
// the user, so it is almost never a use.
type UseModel struct {
	Correct float64 // correct, on-topic memories; default 0.7
	Popular float64 // role "popular"; default 0.15
	Wrong   float64 // correct: false; default 0.05
	Unknown float64 // no correct label; default 0.5
}

// DefaultUseModel is UseModel's defaults.
func DefaultUseModel() UseModel {
	return UseModel{Correct: 0.7, Popular: 0.15, Wrong: 0.05, Unknown: 0.5}
}

func (u UseModel) probability(m *Memory) float64 {
	switch {
	case m.Role == "popular":
		return u.Popular
	case m.Correct == nil:
		return u.Unknown
	case *m.Correct:
		return u.Correct
	}
	return u.Wrong
}

// UsedKey is the access_counts key the simulated uses are stored under.
const UsedKey = "used"

// SimulateUse rewrites the access counts of the set's memories (under
// keys, the payload keys) for signal: returned leaves them; used replaces
// them with the drawn uses; both adds the uses under UsedKey. The draws are
// deterministic for a seed.
func SimulateUse(set *Set, keys memory.Keys, signal AccessSignal, model UseModel, seed int64) {
	if signal == SignalReturned {
		return
	}
	for i := range set.Memories {
		m := &set.Memories[i]
		counts := m.Payload[keys.AccessCounts].GetStructValue().GetFields()
		var reads int64
		for _, v := range counts {
			reads += max(v.GetIntegerValue(), int64(v.GetDoubleValue()))
		}
		uses := drawUses(reads, model.probability(m), seed, m.ID)
		next := map[string]*qdrant.Value{}
		if signal == SignalBoth {
			for k, v := range counts {
				next[k] = v
			}
		}
		if uses > 0 {
			next[UsedKey] = qdrant.NewValueInt(uses)
		}
		if m.Payload == nil {
			m.Payload = map[string]*qdrant.Value{}
		}
		m.Payload[keys.AccessCounts] = qdrant.NewValueFromFields(next)
	}
}

// drawUses is a binomial draw: each of reads is a use with probability p.
func drawUses(reads int64, p float64, seed int64, id string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	var n int64
	for range reads {
		if r.Float64() < p {
			n++
		}
	}
	return n
}
