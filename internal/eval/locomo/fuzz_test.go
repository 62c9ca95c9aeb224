package locomo

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// FuzzParse: Parse never panics, and what it accepts builds.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(mini)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range []string{
		`[]`, `{}`, `[{}]`, `null`,
		`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023",
		  "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi", "blip_caption": "a cat"}]},
		  "qa": [{"question": "q", "evidence": ["D1:1; D9:9", ""], "category": 2}]}]`,
		`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_99999999999999999999": []}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, real := range []bool{false, true} {
			bench, err := Build(samples, Options{At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), RealDates: real})
			if err != nil {
				if len(samples) > 0 {
					t.Fatalf("Build of %d parsed samples: %v", len(samples), err)
				}
				continue
			}
			for _, c := range bench.Conversations {
				for _, q := range c.Questions {
					if len(q.Evidence) == 0 || q.Category < 1 || q.Category > 4 {
						t.Fatalf("question %+v", q)
					}
				}
			}
		}
	})
}
