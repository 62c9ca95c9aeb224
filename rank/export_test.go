package rank

import (
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// StageBench gives rank's external tests and benchmarks the stages that
// MeasureStages times, one at a time: only tests see it, so the stages stay
// out of the package's API.
type StageBench = stageBench

// NewStageBench prepares points as MeasureStages does.
func (r *Ranker) NewStageBench(points []*qdrant.ScoredPoint, distance qdrant.Distance, now time.Time) *StageBench {
	return r.newStageBench(points, distance, now)
}

// Candidates is the number of candidates Decode and ScoreGateSort process.
func (s *stageBench) Candidates() int { return len(s.points) }

// Kept is the number of candidates left after exclusions and the gate,
// which Tier2 folds.
func (s *stageBench) Kept() int { return len(s.items) }

func (s *stageBench) Decode()            { s.decode() }
func (s *stageBench) ScoreGateSort() int { return len(s.scoreGateSort()) }
func (s *stageBench) Tier2() int         { return s.tier2() }
