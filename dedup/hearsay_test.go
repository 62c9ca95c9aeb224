package dedup

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hearsayLabel is one line of testdata/hearsay_*.tsv: label TAB sentence
// [TAB note].
type hearsayLabel struct {
	line           int
	reported       bool
	sentence, note string
}

func readHearsayLabels(t *testing.T, path string) []hearsayLabel {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []hearsayLabel
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) < 2 || len(fields) > 3 || strings.TrimSpace(fields[1]) == "" {
			t.Fatalf("%s:%d: want label TAB sentence [TAB note], got %q", path, n, line)
		}
		l := hearsayLabel{line: n, sentence: fields[1]}
		if len(fields) == 3 {
			l.note = fields[2]
		}
		switch fields[0] {
		case AttributionReported:
			l.reported = true
		case AttributionSelf:
		default:
			t.Fatalf("%s:%d: label %q, want reported or self", path, n, fields[0])
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHearsayLabels measures the hearsay heuristic on the labelled
// sentences of testdata: precision and recall of "reported". The before
// half was written before the rule was tuned, so it is the honest
// measure and must stay at 0.9 or above on both; the after half, written
// once the rule was known, is reported (and held to a looser floor, so
// that a regression there shows too).
func TestHearsayLabels(t *testing.T) {
	files := []struct {
		name string
		min  float64
	}{
		{"hearsay_before.tsv", 0.9},
		{"hearsay_after.tsv", 0.8},
	}
	for _, file := range files {
		t.Run(file.name, func(t *testing.T) {
			labels := readHearsayLabels(t, filepath.Join("testdata", file.name))
			var tp, fp, fn int
			for _, l := range labels {
				cue := hearsayCue(l.sentence)
				switch got := cue != ""; {
				case got && l.reported:
					tp++
				case got && !l.reported:
					fp++
					t.Logf("line %d: false positive, cue %q: %s", l.line, cue, l.sentence)
				case !got && l.reported:
					fn++
					t.Logf("line %d: missed: %s", l.line, l.sentence)
				}
			}
			precision, recall := ratio(tp, tp+fp), ratio(tp, tp+fn)
			t.Logf("%s: %d sentences, %d reported; precision %.3f (%d/%d) recall %.3f (%d/%d)",
				file.name, len(labels), tp+fn, precision, tp, tp+fp, recall, tp, tp+fn)
			if precision < file.min || recall < file.min {
				t.Errorf("precision %.3f recall %.3f, want both >= %.2f", precision, recall, file.min)
			}
		})
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// TestHearsayReportedOrSelf: the brief's examples, and the edges of each
// rule. want is the cue, "" for the speaker's own (not capped).
func TestHearsayReportedOrSelf(t *testing.T) {
	tests := []struct{ text, want string }{
		// Reported claims about a third party.
		{"I heard that Acme is pivoting", "i heard that"},
		{"Sam told me Dana is moving to Porto", "sam told me"},
		{"apparently the launch slipped", "apparently"},
		{"rumor has it the office is closing", "rumor has it"},
		{"according to Priya, the deadline moved", "according to"},
		{"my sister said she got the job", "sister said"},
		{"Caroline: I heard the bakery is closing down", "i heard"},
		{"I heard from a friend that the concert was cancelled", "i heard that"},
		{"I heard Dana's moving to Porto", "i heard"},
		{"The launch slipped, I heard.", "i heard"},
		{"As Sam told me, the office is moving", "sam told me"},
		{"From what I heard, the trail is closed", "from what i heard"},
		{"Doctors say the flu season is early", "doctors say"},
		{"My aunt texted me that the baby was born", "aunt texted me that"},
		{"I heard you're moving to Berlin", "i heard"},
		{"Everyone says the new café is great", "everyone says"},
		// First-person events that mention hearing or telling.
		{"I heard some cool stories from a veteran", ""},
		{"Caroline: I heard some cool stories from an old sailor at the pier", ""},
		{"I told my mom about the trip", ""},
		{"we heard a great band last night", ""},
		{"she told me a joke and I laughed", ""},
		{"I listened to a podcast about octopuses", ""},
		{"I heard back from the recruiter: I got the offer", ""}, // the speaker's own news
		{"The doctor told me I need to rest", ""},                // about the speaker, told first hand
		{"My therapist told me to journal every day", ""},        // an instruction
		{"I heard the crowd cheering when I crossed the line", ""},
		{"I heard my daughter sing at her recital", ""},
		{"I've heard that song a hundred times", ""},
		{"I heard a song that reminded me of you", ""},
		{"I heard Dana's band play last night", ""},
		{"I heard some amazing stories from a retired nurse", ""},
		{"I heard two hundred", ""},
		{"She said thank you and hugged me", ""},
		{"I always say the best coffee is at home", ""},
		{"I always said that we would travel", ""},
		{"I have to say the food was amazing", ""},
		{"I'd say the trip was great", ""},
		{"That's what she said.", ""},
		{"She told me.", ""},
		{"The label does say it's organic", ""},
		{"I've heard of that band", ""},
		// Kinds of conversation turns the rule first capped wrongly.
		{"I heard some cool stories from an old soldier named Ray", ""},
		{"Glad to hear you found a new job!", ""},
		{"Sorry to hear that your week was rough", ""},
		{"Can't wait to hear how the show goes", ""},
		{"Let's catch up and hear all about the trip", ""},
		{"You mentioned you were allergic to cats, how bad is it?", ""},
		{"So you said you had a health scare?", ""},
		{"I asked the shelter and they said yes", ""},
		{"They said on the radio that the highway is closed", "they said that"},
		{"Doctors said everything is fine", "doctors said"},
	}
	for _, tc := range tests {
		if got := hearsayCue(tc.text); got != tc.want {
			t.Errorf("hearsayCue(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
