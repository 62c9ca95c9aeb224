package evalfmt

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		name       string
		f          float64
		json, cell string
	}{
		{"a number", 0.4312, "0.4312", "0.431"},
		{"zero", 0, "0", "0.000"},
		{"not a number", math.NaN(), "null", "-"},
		{"infinite", math.Inf(1), "null", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Float(tc.f))
			if err != nil || string(b) != tc.json {
				t.Errorf("json %s, %v; want %s", b, err, tc.json)
			}
			if got := F3(tc.f); got != tc.cell {
				t.Errorf("F3 = %q, want %q", got, tc.cell)
			}
		})
	}
	if got := Plural(1, "question", "questions") + ", " + Plural(3, "question", "questions"); got != "1 question, 3 questions" {
		t.Errorf("Plural: %q", got)
	}
}
