package eval

import (
	"fmt"
	"slices"
	"testing"
)

func TestSplitDeterministic(t *testing.T) {
	units := make([]string, 1000)
	for i := range units {
		units[i] = fmt.Sprintf("topic:t%03d", i)
	}
	a := NewSplit(1, units)
	reversed := slices.Clone(units)
	slices.Reverse(reversed)
	// Repeated units count once.
	b := NewSplit(1, append(reversed, units[:10]...))
	other := NewSplit(2, units)
	test, differ := 0, 0
	for _, u := range units {
		if a.Test(u) != b.Test(u) {
			t.Fatalf("%s: the order of the units changed the split", u)
		}
		if a.Test(u) {
			test++
		}
		if a.Test(u) != other.Test(u) {
			differ++
		}
		if a.In(u, PartTrain) == a.In(u, PartTest) || !a.In(u, PartAll) {
			t.Fatalf("%s: train and test must partition the units", u)
		}
	}
	if test != 200 {
		t.Errorf("%d of 1000 units held out, want 200", test)
	}
	if differ == 0 {
		t.Error("seeds 1 and 2 split alike")
	}
}

func TestSplitProportions(t *testing.T) {
	for _, tc := range []struct{ units, test int }{{0, 0}, {1, 0}, {2, 0}, {3, 1}, {5, 1}, {7, 1}, {8, 2}, {10, 2}, {115, 23}} {
		units := make([]string, tc.units)
		for i := range units {
			units[i] = fmt.Sprint(i)
		}
		s := NewSplit(42, units)
		if got := len(s.test); got != tc.test {
			t.Errorf("%d units: %d held out, want %d", tc.units, got, tc.test)
		}
	}
}

func TestSetSplitFollowsTopics(t *testing.T) {
	s := &Set{
		Memories: []Memory{{ID: "1", Topic: "a"}, {ID: "2", Topic: "b"}, {ID: "3"}},
		Queries:  []Query{{ID: "q1", Topic: "a"}, {ID: "q2", Topic: "b"}, {ID: "q3"}},
	}
	for seed := range int64(20) {
		sp := s.Split(seed)
		// Four units (topics a and b, memory 3, query q3): one is
		// held out, and a query goes where its topic's memories go.
		held := 0
		for _, u := range []string{"topic:a", "topic:b", "memory:3", "query:q3"} {
			if sp.Test(u) {
				held++
			}
		}
		if held != 1 {
			t.Errorf("seed %d: %d units held out, want 1", seed, held)
		}
		if sp.Test(s.Memories[0].Unit()) != sp.Test(s.Queries[0].Unit()) {
			t.Errorf("seed %d: memory 1 and query q1 share topic a but not a side", seed)
		}
	}
}

func TestParsePart(t *testing.T) {
	for _, p := range []Part{PartAll, PartTrain, PartTest} {
		got, err := ParsePart(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePart(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParsePart("held-out"); err == nil {
		t.Error("ParsePart accepted held-out")
	}
}
