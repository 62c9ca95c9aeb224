package locomo

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mini is a small hand-written file in LoCoMo's format (not LoCoMo's data):
// two conversations, a caption, a session date without turns, a
// multi-id evidence string, an evidence id naming no turn, a question
// without evidence and an adversarial one. For the write path, conv-44
// has an evidence turn restating an earlier one of its speaker (D1:3,
// D2:2), two speakers saying the same short sentence (D1:4, D2:3) and a
// paraphrase by one speaker (D1:5, D2:4).
var mini = filepath.Join("testdata", "mini.json")

func openMini(t *testing.T) []Sample {
	t.Helper()
	samples, err := Open(mini)
	if err != nil {
		t.Fatal(err)
	}
	return samples
}

func utc(y int, m time.Month, d, h, mi int) time.Time {
	return time.Date(y, m, d, h, mi, 0, 0, time.UTC)
}

func TestParse(t *testing.T) {
	want := []Sample{
		{
			ID: "conv-26", SpeakerA: "Ana", SpeakerB: "Ben",
			Sessions: []Session{
				{Number: 1, ID: "session_1", DateTime: "1:56 pm on 8 May, 2023", Time: utc(2023, 5, 8, 13, 56), Turns: []Turn{
					{Speaker: "Ana", DiaID: "D1:1", Text: "I adopted a cat last week, her name is Miso."},
					{Speaker: "Ben", DiaID: "D1:2", Text: "Lovely! I have started learning the cello."},
					{Speaker: "Ana", DiaID: "D1:3", Text: "Here she is, asleep already.", Caption: "a photo of a grey cat on a sofa"},
				}},
				{Number: 2, ID: "session_2", DateTime: "10:05 AM on 20 May, 2023", Time: utc(2023, 5, 20, 10, 5), Turns: []Turn{
					{Speaker: "Ben", DiaID: "D2:1", Text: "My cello teacher moved to Porto, so I need a new one."},
					{Speaker: "Ana", DiaID: "D2:2", Text: "Miso has learned to open the kitchen door."},
				}},
			},
			QA: []QA{
				{Question: "What is the name of Ana's cat?", Category: 4, Evidence: []string{"D1:1"}},
				{Question: "What did Ana share a photo of, and what has it learned?", Category: 1, Evidence: []string{"D1:3; D2:2"}},
				{Question: "When did Ben's cello teacher move away?", Category: 2, Evidence: []string{"D2:1", "D9:9"}},
				{Question: "What instrument might Ben play in an orchestra?", Category: 3, Evidence: []string{"D1:2"}},
				{Question: "What is the name of Ana's dog?", Category: 5, Evidence: []string{"D1:1"}},
				{Question: "Does Ben like jazz?", Category: 3, Evidence: []string{}},
			},
		},
		{
			ID: "conv-44", SpeakerA: "Caro", SpeakerB: "Dev",
			Sessions: []Session{
				{Number: 1, ID: "session_1", DateTime: "7:31 pm on 21 January, 2022", Time: utc(2022, 1, 21, 19, 31), Turns: []Turn{
					{Speaker: "Caro", DiaID: "D1:1", Text: "I ran my first marathon, in Lisbon!"},
					{Speaker: "Dev", DiaID: "D1:2", Text: "Congratulations! I am moving to Oslo next month."},
					{Speaker: "Caro", DiaID: "D1:3", Text: "I signed up for my first triathlon!"},
					{Speaker: "Dev", DiaID: "D1:4", Text: "That's awesome!"},
					{Speaker: "Dev", DiaID: "D1:5", Text: "My sister lives in Bergen with her two dogs."},
				}},
				{Number: 2, ID: "session_2", DateTime: "11:04 am on 23 April, 2022", Time: utc(2022, 4, 23, 11, 4), Turns: []Turn{
					{Speaker: "Dev", DiaID: "D2:1", Text: "Oslo is cold, but the fjords are worth it."},
					{Speaker: "Caro", DiaID: "D2:2", Text: "I signed up for my first triathlon."},
					{Speaker: "Caro", DiaID: "D2:3", Text: "That's awesome!"},
					{Speaker: "Dev", DiaID: "D2:4", Text: "My sister and her two dogs live in Bergen."},
				}},
			},
			QA: []QA{
				{Question: "Where did Caro run her first marathon?", Category: 4, Evidence: []string{"D1:1"}},
				{Question: "Where does Dev live now?", Category: 1, Evidence: []string{"D1:2", "D2:1", "D1:2"}},
				{Question: "What race did Caro sign up for recently?", Category: 2, Evidence: []string{"D2:2"}},
				{Question: "What is Caro's favourite colour?", Category: 4, Evidence: []string{"D7:1"}},
			},
		},
	}
	if diff := cmp.Diff(want, openMini(t)); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	// sample builds a one-sample file from a conversation body and a qa
	// list.
	sample := func(id, conv, qa string) string {
		return `[{"sample_id": ` + id + `, "conversation": {"speaker_a": "A", "speaker_b": "B"` + conv + `}, "qa": [` + qa + `]}]`
	}
	const s1 = `, "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"not JSON", `{`, "not a JSON array of samples"},
		{"an object", `{"sample_id": "x"}`, "not a JSON array of samples"},
		{"no sample_id", sample(`""`, s1, ""), "sample 1: no sample_id"},
		{"repeated sample", `[` + strings.Trim(sample(`"c"`, s1, ""), "[]") + `,` + strings.Trim(sample(`"c"`, s1, ""), "[]") + `]`,
			`c: sample_id "c" repeats`},
		{"no conversation", `[{"sample_id": "c", "qa": []}]`, "c: no conversation"},
		{"no speaker", `[{"sample_id": "c", "conversation": {"speaker_b": "B"}}]`, "c: conversation has no speaker_a"},
		{"no session", sample(`"c"`, "", ""), "c: conversation has no session with turns"},
		{"session without date", sample(`"c"`, `, "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]`, ""),
			"c: session_1 has turns but there is no session_1_date_time"},
		{"bad date", sample(`"conv-9"`, `, "session_1_date_time": "yesterday", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]`, ""),
			`conv-9: session_1_date_time: "yesterday" is not a date`},
		{"date not a string", sample(`"c"`, `, "session_1_date_time": 3, "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]`, ""),
			"c: session_1_date_time: json: cannot unmarshal number"},
		{"turns not a list", sample(`"c"`, `, "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": {}`, ""),
			"c: session_1: json: cannot unmarshal object"},
		{"turn without dia_id", sample(`"c"`, `, "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "text": "hi"}]`, ""),
			"c: session_1[0]: no dia_id"},
		{"turn without text", sample(`"c"`, `, "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1"}]`, ""),
			"c: session_1[0] (D1:1): no text"},
		{"repeated dia_id", sample(`"c"`, s1+`, "session_2_date_time": "1:00 pm on 2 May, 2023", "session_2": [{"speaker": "A", "dia_id": "D1:1", "text": "again"}]`, ""),
			`c: dia_id "D1:1" is in session_1 and again in session_2`},
		{"same session twice", sample(`"c"`, s1+`, "session_01": [{"speaker": "A", "dia_id": "D1:2", "text": "hi"}]`, ""),
			"c: session_01 and session_1 are the same session"},
		{"category out of range", sample(`"c"`, s1, `{"question": "q", "evidence": ["D1:1"], "category": 6}`), "c: qa[0]: category 6 is not 1..5"},
		{"no category", sample(`"c"`, s1, `{"question": "q", "evidence": ["D1:1"]}`), "c: qa[0]: no category"},
		{"no question", sample(`"c"`, s1, `{"evidence": ["D1:1"], "category": 1}`), "c: qa[0]: no question"},
		{"evidence not strings", sample(`"c"`, s1, `{"question": "q", "evidence": [1], "category": 1}`), "c: json: cannot unmarshal number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time // zero: an error
	}{
		{"1:56 pm on 8 May, 2023", utc(2023, 5, 8, 13, 56)},
		{"10:05 AM on 20 May, 2023", utc(2023, 5, 20, 10, 5)},
		{"12:06 am on 11 November, 2022", utc(2022, 11, 11, 0, 6)},
		{"12:30 pm on 1 June, 2023", utc(2023, 6, 1, 12, 30)},
		{"9:00 Pm on 01 june, 2023", utc(2023, 6, 1, 21, 0)},
		{"  7:31 pm  on 21 January,  2022 ", utc(2022, 1, 21, 19, 31)},
		{"7:31 pm on 21 January 2022", utc(2022, 1, 21, 19, 31)},
		{"", time.Time{}},
		{"8 May, 2023", time.Time{}},
		{"13:00 pm on 8 May, 2023", time.Time{}},
		{"1:56 pm on 31 February, 2023", time.Time{}},
		{"1:56 on 8 May, 2023", time.Time{}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTime(tc.in)
			if tc.want.IsZero() {
				if err == nil {
					t.Fatalf("ParseTime = %v, want an error", got)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("ParseTime = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
