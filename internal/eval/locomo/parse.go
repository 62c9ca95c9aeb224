package locomo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sample is one LoCoMo conversation with its questions.
type Sample struct {
	ID       string // sample_id, e.g. "conv-26"
	SpeakerA string
	SpeakerB string
	// Sessions are the sessions with turns, by number (a date without
	// turns is left out).
	Sessions []Session
	QA       []QA // in file order
}

// Session is one session of a conversation.
type Session struct {
	Number   int
	ID       string // "session_3"
	DateTime string // as written: "1:56 pm on 8 May, 2023"
	Time     time.Time
	Turns    []Turn
}

// Turn is one turn of a session.
type Turn struct {
	Speaker string
	DiaID   string // "D3:5"
	Text    string
	Caption string // blip_caption: the image the speaker shares ("" none)
}

// QA is one question with its evidence.
type QA struct {
	Question string
	Category int      // 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
	Evidence []string // as written (one string may name several turns)
}

var (
	sessionKey  = regexp.MustCompile(`^session_([0-9]+)$`)
	sessionDate = regexp.MustCompile(`^session_([0-9]+)_date_time$`)
)

// Open reads the LoCoMo file at path; see Parse.
func Open(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	samples, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return samples, nil
}

// Parse reads a LoCoMo file: a JSON array of samples. Keys the format does
// not use are ignored; a missing or ill-typed field the protocol needs, a
// date that does not parse, a repeated sample or turn id and a category
// outside 1..5 are errors naming the sample (and the key).
func Parse(r io.Reader) ([]Sample, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, fmt.Errorf("locomo: not a JSON array of samples: %w", err)
	}
	out := make([]Sample, 0, len(raws))
	seen := make(map[string]bool, len(raws))
	for i, raw := range raws {
		s, err := parseSample(raw)
		if err != nil {
			return nil, fmt.Errorf("locomo: %s: %w", sampleName(i, raw, s.ID), err)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("locomo: %s: sample_id %q repeats an earlier sample's", sampleName(i, raw, s.ID), s.ID)
		}
		seen[s.ID] = true
		out = append(out, s)
	}
	return out, nil
}

// sampleName names a sample in an error: its id, else its position.
func sampleName(i int, raw json.RawMessage, id string) string {
	if id == "" {
		var v struct {
			ID string `json:"sample_id"`
		}
		if json.Unmarshal(raw, &v) == nil {
			id = v.ID
		}
	}
	if id == "" {
		return fmt.Sprintf("sample %d", i+1)
	}
	return id
}

type rawSample struct {
	SampleID     *string                    `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []rawQA                    `json:"qa"`
}

type rawQA struct {
	Question *string  `json:"question"`
	Category *int     `json:"category"`
	Evidence []string `json:"evidence"`
}

type rawTurn struct {
	Speaker *string `json:"speaker"`
	DiaID   *string `json:"dia_id"`
	Text    *string `json:"text"`
	Caption *string `json:"blip_caption"`
}

func parseSample(raw json.RawMessage) (Sample, error) {
	var rs rawSample
	if err := json.Unmarshal(raw, &rs); err != nil {
		return Sample{}, err
	}
	if rs.SampleID == nil || strings.TrimSpace(*rs.SampleID) == "" {
		return Sample{}, errors.New("no sample_id")
	}
	s := Sample{ID: *rs.SampleID}
	if rs.Conversation == nil {
		return s, errors.New("no conversation")
	}
	var err error
	if s.SpeakerA, err = stringKey(rs.Conversation, "speaker_a"); err != nil {
		return s, err
	}
	if s.SpeakerB, err = stringKey(rs.Conversation, "speaker_b"); err != nil {
		return s, err
	}
	if s.Sessions, err = parseSessions(rs.Conversation); err != nil {
		return s, err
	}
	for i, q := range rs.QA {
		switch {
		case q.Question == nil:
			return s, fmt.Errorf("qa[%d]: no question", i)
		case q.Category == nil:
			return s, fmt.Errorf("qa[%d]: no category", i)
		case *q.Category < 1 || *q.Category > 5:
			return s, fmt.Errorf("qa[%d]: category %d is not 1..5", i, *q.Category)
		}
		s.QA = append(s.QA, QA{Question: *q.Question, Category: *q.Category, Evidence: q.Evidence})
	}
	return s, nil
}

func stringKey(conv map[string]json.RawMessage, key string) (string, error) {
	raw, ok := conv[key]
	if !ok {
		return "", fmt.Errorf("conversation has no %s", key)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("conversation.%s: %w", key, err)
	}
	return v, nil
}

// parseSessions reads the sessions that have turns, with their dates, by
// number.
func parseSessions(conv map[string]json.RawMessage) ([]Session, error) {
	keys := make(map[int]string) // session number -> its turns' key
	for key := range conv {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("%s: the session number is out of range", key)
		}
		if other, ok := keys[n]; ok {
			a, b := min(key, other), max(key, other)
			return nil, fmt.Errorf("%s and %s are the same session", a, b)
		}
		keys[n] = key
	}
	dates := make(map[int]string) // session number -> its date's key
	for key := range conv {
		if m := sessionDate.FindStringSubmatch(key); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				dates[n] = key
			}
		}
	}
	var out []Session
	for _, n := range slices.Sorted(maps.Keys(keys)) {
		key := keys[n]
		var turns []rawTurn
		if err := json.Unmarshal(conv[key], &turns); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if len(turns) == 0 {
			continue
		}
		s := Session{Number: n, ID: fmt.Sprintf("session_%d", n)}
		dateKey, ok := dates[n]
		if !ok {
			return nil, fmt.Errorf("%s has turns but there is no %s_date_time", key, key)
		}
		if err := json.Unmarshal(conv[dateKey], &s.DateTime); err != nil {
			return nil, fmt.Errorf("%s: %w", dateKey, err)
		}
		t, err := ParseTime(s.DateTime)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dateKey, err)
		}
		s.Time = t
		for i, rt := range turns {
			switch {
			case rt.Speaker == nil:
				return nil, fmt.Errorf("%s[%d]: no speaker", key, i)
			case rt.DiaID == nil || *rt.DiaID == "":
				return nil, fmt.Errorf("%s[%d]: no dia_id", key, i)
			case rt.Text == nil:
				return nil, fmt.Errorf("%s[%d] (%s): no text", key, i, *rt.DiaID)
			}
			t := Turn{Speaker: *rt.Speaker, DiaID: *rt.DiaID, Text: *rt.Text}
			if rt.Caption != nil {
				t.Caption = *rt.Caption
			}
			s.Turns = append(s.Turns, t)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("conversation has no session with turns")
	}
	seen := make(map[string]string)
	for _, s := range out {
		for _, t := range s.Turns {
			if other, ok := seen[t.DiaID]; ok {
				return nil, fmt.Errorf("dia_id %q is in %s and again in %s", t.DiaID, other, s.ID)
			}
			seen[t.DiaID] = s.ID
		}
	}
	return out, nil
}

// ParseTime reads a session date such as "1:56 pm on 8 May, 2023" as UTC.
// It is lenient with the case of "am"/"pm" and of the month, with one- or
// two-digit hours and days, and with extra spaces.
func ParseTime(s string) (time.Time, error) {
	v := strings.ToLower(strings.Join(strings.Fields(s), " "))
	// Go matches month names in any case; "pm" in a layout only in lower.
	for _, layout := range [...]string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 January 2006"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date like \"1:56 pm on 8 May, 2023\"", s)
}
