package locomo

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

func TestTurnText(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn Turn
		want string
	}{
		{"plain", Turn{Speaker: "Ana", Text: "Hello there."}, "Ana: Hello there."},
		{"caption", Turn{Speaker: "Ana", Text: "Look!", Caption: "a photo of a cat"}, "Ana: Look! [shares image: a photo of a cat]"},
		{"empty text", Turn{Speaker: "Ben", Caption: "a dog"}, "Ben:  [shares image: a dog]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TurnText(tc.turn); got != tc.want {
				t.Errorf("TurnText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSplitEvidence(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"one each", []string{"D1:3", "D2:4"}, []string{"D1:3", "D2:4"}},
		{"semicolon", []string{"D8:6; D9:17"}, []string{"D8:6", "D9:17"}},
		{"spaces", []string{"D9:1 D4:4  D4:6"}, []string{"D9:1", "D4:4", "D4:6"}},
		{"commas and edges", []string{" D1:1,D1:2 ;", ""}, []string{"D1:1", "D1:2"}},
		{"leading zeros read as numbers", []string{"D30:05", "D007:1"}, []string{"D30:5", "D7:1"}},
		{"ids that are no turn id kept as they are", []string{"D", "D:11:26"}, []string{"D", "D:11:26"}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SplitEvidence(tc.in)); diff != "" {
				t.Errorf("SplitEvidence (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCollectionName(t *testing.T) {
	for in, want := range map[string]string{"conv-26": "locomo_conv_26", "a b.c": "locomo_a_b_c", "x_1": "locomo_x_1"} {
		if got := CollectionName(in); got != want {
			t.Errorf("CollectionName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsDev(t *testing.T) {
	for id, want := range map[string]bool{"conv-26": true, "conv-43": true, "conv-44": false, "conv-50": false, "": false} {
		if got := IsDev(id); got != want {
			t.Errorf("IsDev(%q) = %v", id, got)
		}
	}
}

var at = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestBuildShifted(t *testing.T) {
	b, err := Build(openMini(t), Options{At: at})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Conversations) != 2 {
		t.Fatalf("%d conversations", len(b.Conversations))
	}
	// conv-26: its latest session (20 May 2023 10:05) lies at at - 24h;
	// the first one 11 days 20:09 earlier.
	s1, s2 := utc(2026, 11, 18, 3, 51), utc(2026, 11, 30, 0, 0)
	c := b.Conversations[0]
	wantPoints := []Point{
		{ID: 1, DiaID: "D1:1", SessionID: "session_1", Speaker: "Ana", Text: "Ana: I adopted a cat last week, her name is Miso.", Time: s1},
		{ID: 2, DiaID: "D1:2", SessionID: "session_1", Speaker: "Ben", Text: "Ben: Lovely! I have started learning the cello.", Time: s1},
		{ID: 3, DiaID: "D1:3", SessionID: "session_1", Speaker: "Ana", Text: "Ana: Here she is, asleep already. [shares image: a photo of a grey cat on a sofa]", Time: s1},
		{ID: 4, DiaID: "D2:1", SessionID: "session_2", Speaker: "Ben", Text: "Ben: My cello teacher moved to Porto, so I need a new one.", Time: s2},
		{ID: 5, DiaID: "D2:2", SessionID: "session_2", Speaker: "Ana", Text: "Ana: Miso has learned to open the kitchen door.", Time: s2},
	}
	if diff := cmp.Diff(wantPoints, c.Points); diff != "" {
		t.Errorf("conv-26 points (-want +got):\n%s", diff)
	}
	if !c.Dev || c.Sessions != 2 || !c.First.Equal(s1) || !c.Last.Equal(at.Add(-LastSessionAge)) ||
		c.Shift != s2.Sub(utc(2023, 5, 20, 10, 5)) || c.Collection() != "locomo_conv_26" {
		t.Errorf("conv-26: dev %v, sessions %d, first %v, last %v, shift %v, collection %q", c.Dev, c.Sessions, c.First, c.Last, c.Shift, c.Collection())
	}
	// conv-44: its latest session (23 April 2022 11:04) at at - 24h too.
	c44 := b.Conversations[1]
	if c44.Dev || !c44.Last.Equal(s2) || !c44.First.Equal(utc(2026, 8, 30, 8, 27)) || !c44.Points[5].Time.Equal(s2) || !c44.Points[4].Time.Before(s2) {
		t.Errorf("conv-44: dev %v, first %v, last %v", c44.Dev, c44.First, c44.Last)
	}

	wantQuestions := []Question{
		{SampleID: "conv-26", Index: 0, Category: SingleHop, Text: "What is the name of Ana's cat?", Evidence: []string{"D1:1"}, Recent: true},
		{SampleID: "conv-26", Index: 1, Category: MultiHop, Text: "What did Ana share a photo of, and what has it learned?", Evidence: []string{"D1:3", "D2:2"}, Recent: true},
		{SampleID: "conv-26", Index: 2, Category: Temporal, Text: "When did Ben's cello teacher move away?", Evidence: []string{"D2:1"}, Recent: true},
		{SampleID: "conv-26", Index: 3, Category: OpenDomain, Text: "What instrument might Ben play in an orchestra?", Evidence: []string{"D1:2"}, Recent: true},
		{SampleID: "conv-44", Index: 0, Category: SingleHop, Text: "Where did Caro run her first marathon?", Evidence: []string{"D1:1"}},
		{SampleID: "conv-44", Index: 1, Category: MultiHop, Text: "Where does Dev live now?", Evidence: []string{"D1:2", "D2:1"}},
		{SampleID: "conv-44", Index: 2, Category: Temporal, Text: "What race did Caro sign up for recently?", Evidence: []string{"D2:2"}, Recent: true},
	}
	got := append(append([]Question{}, c.Questions...), c44.Questions...)
	if diff := cmp.Diff(wantQuestions, got); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Skipped{Adversarial: 1, NoEvidence: 2}, b.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	wantDropped := []DroppedEvidence{{"conv-26", 2, "D9:9"}, {"conv-44", 3, "D7:1"}}
	if diff := cmp.Diff(wantDropped, b.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if b.Turns() != 14 || b.Questions() != 7 {
		t.Errorf("%d turns, %d questions; want 14, 7", b.Turns(), b.Questions())
	}
}

func TestBuildRealDates(t *testing.T) {
	b, err := Build(openMini(t), Options{At: at, RealDates: true})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Conversations[0]
	if c.Shift != 0 || !c.Points[0].Time.Equal(utc(2023, 5, 8, 13, 56)) || !c.Last.Equal(utc(2023, 5, 20, 10, 5)) {
		t.Errorf("real dates: shift %v, first point at %v, last %v", c.Shift, c.Points[0].Time, c.Last)
	}
	for _, c := range b.Conversations {
		for _, q := range c.Questions {
			if q.Recent {
				t.Errorf("%s qa[%d] is recent with the real dates (2022-2023, at %v)", q.SampleID, q.Index, at)
			}
		}
	}
	// With at just after conv-26's sessions, its questions are recent
	// again: "recent" reads the dates as stored.
	b, err = Build(openMini(t), Options{At: utc(2023, 6, 1, 0, 0), RealDates: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range b.Conversations[0].Questions {
		if !q.Recent {
			t.Errorf("conv-26 qa[%d] is not recent at 1 June 2023", q.Index)
		}
	}
}

func TestBuildRecentWindow(t *testing.T) {
	samples := openMini(t)
	// Shifted, conv-26's first session lies 12d 20:09 before at; with at
	// moved so that it lies just outside 30 days, only session 2 is
	// recent. Real dates make at - first exactly what is tested.
	first := utc(2023, 5, 8, 13, 56)
	for _, tc := range []struct {
		name string
		at   time.Time
		want []bool // conv-26's questions
	}{
		{"exactly 30 days after", first.Add(RecentWindow), []bool{true, true, true, true}},
		{"a minute more", first.Add(RecentWindow + time.Minute), []bool{false, false, true, false}},
		{"before the sessions", first.Add(-time.Hour), []bool{false, false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Build(samples, Options{At: tc.at, RealDates: true, Only: []string{"conv-26"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []bool
			for _, q := range b.Conversations[0].Questions {
				got = append(got, q.Recent)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("recent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildOnly(t *testing.T) {
	samples := openMini(t)
	b, err := Build(samples, Options{At: at, Only: []string{"conv-44"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Conversations) != 1 || b.Conversations[0].SampleID != "conv-44" || b.Skipped != (Skipped{NoEvidence: 1}) {
		t.Errorf("only conv-44: %d conversations, skipped %+v", len(b.Conversations), b.Skipped)
	}
	_, err = Build(samples, Options{At: at, Only: []string{"conv-44", "conv-99"}})
	if err == nil || !strings.Contains(err.Error(), `no conversation "conv-99" in the file (it has conv-26, conv-44)`) {
		t.Errorf("an unknown conversation: %v", err)
	}
	if _, err := Build(samples, Options{}); err == nil {
		t.Error("Build without at: no error")
	}
}

// TestPointMemory: the payload decodes back to a direct fact without a
// stored confidence, dated by its session, with its session and turn.
func TestPointMemory(t *testing.T) {
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	when := utc(2026, 11, 30, 0, 0)
	p := Point{ID: 3, DiaID: "D1:3", SessionID: "session_1", Speaker: "Ana", Text: "Ana: Look!", Time: when}
	payload := codec.Encode(p.Memory())
	m := codec.DecodeQdrant(payload)
	if m.Text != "Ana: Look!" || m.Source != scoring.SourceDirect || m.MemoryType != scoring.TypeFact || m.HasConfidence ||
		m.ExtractorModel != "" || !m.CreatedAt.Equal(when) || !m.LastObservedAt.Equal(when) || !m.Retrievable ||
		m.Tier != scoring.TierActive || m.Observations != 0 || len(m.AccessCounts) != 0 {
		t.Errorf("decoded %+v", m)
	}
	if diff := cmp.Diff([]string{"session_1"}, m.SessionIDs); diff != "" {
		t.Errorf("session ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"D1:3"}, m.TurnIDs); diff != "" {
		t.Errorf("turn ids (-want +got):\n%s", diff)
	}
	if _, ok := payload["confidence"]; ok {
		t.Error("the payload stores a confidence")
	}
}
