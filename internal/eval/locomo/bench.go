package locomo

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// The protocol's constants.
const (
	// Limit is the results asked for per question.
	Limit = 25
	// LastSessionAge is how long before at each conversation's latest
	// session lies once its dates are shifted.
	LastSessionAge = 24 * time.Hour
	// RecentWindow is how far before at a session counts as recent.
	RecentWindow = 30 * 24 * time.Hour
	// CollectionPrefix begins every collection name.
	CollectionPrefix = "locomo_"
)

// Question categories.
const (
	MultiHop    = 1
	Temporal    = 2
	OpenDomain  = 3
	SingleHop   = 4
	Adversarial = 5
)

// CategoryName is the category's name: multi-hop, temporal, open-domain,
// single-hop, adversarial.
func CategoryName(c int) string {
	switch c {
	case MultiHop:
		return "multi-hop"
	case Temporal:
		return "temporal"
	case OpenDomain:
		return "open-domain"
	case SingleHop:
		return "single-hop"
	case Adversarial:
		return "adversarial"
	}
	return fmt.Sprintf("category %d", c)
}

// DefaultAt is the default evaluation instant.
func DefaultAt() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }

// DevSamples are the conversations designs are tuned on; the other five
// are held out.
func DevSamples() []string { return []string{"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"} }

// IsDev says whether the sample is one of DevSamples.
func IsDev(sampleID string) bool { return slices.Contains(DevSamples(), sampleID) }

// Options say how a file becomes a Bench.
type Options struct {
	// At is the evaluation instant: every ranker's clock.
	At time.Time
	// RealDates keeps the file's dates; otherwise each conversation's are
	// shifted so that its latest session lies LastSessionAge before At.
	RealDates bool
	// Only keeps these samples (file order is kept); empty: all.
	Only []string
}

// Bench is the evaluation's data: the conversations' memories and the
// questions asked.
type Bench struct {
	At            time.Time
	RealDates     bool
	Conversations []Conversation
	Skipped       Skipped
	// Dropped are the evidence ids that name no turn of their
	// conversation.
	Dropped []DroppedEvidence
}

// Skipped counts the questions not asked.
type Skipped struct {
	Adversarial int `json:"adversarial"` // category 5
	NoEvidence  int `json:"no_evidence"` // no evidence id names a turn
}

// DroppedEvidence is an evidence id naming no turn.
type DroppedEvidence struct {
	SampleID string `json:"sample_id"`
	Question int    `json:"question"` // the question's index in the sample's qa
	ID       string `json:"id"`
}

// Conversation is one sample as memories and questions.
type Conversation struct {
	SampleID string
	Dev      bool
	// Shift was added to every date (0 with real dates).
	Shift     time.Duration
	Sessions  int
	First     time.Time // the earliest session's time, shifted
	Last      time.Time // the latest session's time, shifted
	Points    []Point
	Questions []Question
}

// Collection is the conversation's collection name before a system's
// suffix: "locomo_conv_26".
func (c *Conversation) Collection() string { return CollectionName(c.SampleID) }

// Point is one turn as the memory the store holds.
type Point struct {
	ID        uint64 // 1-based position in the conversation
	DiaID     string
	SessionID string // "session_3"
	Speaker   string // the turn's speaker, as the file names them
	Text      string // TurnText
	Time      time.Time
}

// Question is one question asked.
type Question struct {
	SampleID string
	Index    int // position in the sample's qa (0-based)
	Category int
	Text     string
	Evidence []string // turn ids, distinct, each naming a turn
	// Recent: every evidence turn lies in a session within RecentWindow
	// before At.
	Recent bool
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// CollectionName is the collection of a sample: "conv-26" gives
// "locomo_conv_26".
func CollectionName(sampleID string) string {
	return CollectionPrefix + nonName.ReplaceAllString(sampleID, "_")
}

// TurnText is a turn's memory text: "Speaker: text", and " [shares image:
// CAPTION]" when the turn shares an image.
func TurnText(t Turn) string {
	s := t.Speaker + ": " + t.Text
	if t.Caption != "" {
		s += " [shares image: " + t.Caption + "]"
	}
	return s
}

var (
	evidenceSep = regexp.MustCompile(`[;,\s]+`)
	turnID      = regexp.MustCompile(`^D0*([0-9]+):0*([0-9]+)$`)
)

// SplitEvidence splits evidence strings into turn ids: "D8:6; D9:17" names
// two. An id's numbers are read as numbers ("D30:05" is turn D30:5); other
// ids are kept as they are (and name no turn).
func SplitEvidence(evidence []string) []string {
	var out []string
	for _, e := range evidence {
		for _, id := range evidenceSep.Split(e, -1) {
			if m := turnID.FindStringSubmatch(id); m != nil {
				id = "D" + m[1] + ":" + m[2]
			}
			if id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}

// Memory is the point's memory record: a direct fact without stored
// confidence, created and last observed at the point's time, retrievable
// and active.
func (p *Point) Memory() *memory.Memory {
	return &memory.Memory{
		Text:           p.Text,
		MemoryType:     scoring.TypeFact,
		Source:         scoring.SourceDirect,
		CreatedAt:      p.Time,
		LastObservedAt: p.Time,
		SessionIDs:     []string{p.SessionID},
		TurnIDs:        []string{p.DiaID},
		Retrievable:    true,
		Tier:           scoring.TierActive,
	}
}

// Build turns the parsed samples into the evaluation's conversations.
func Build(samples []Sample, opts Options) (*Bench, error) {
	if opts.At.IsZero() {
		return nil, fmt.Errorf("locomo: no evaluation instant")
	}
	b := &Bench{At: opts.At.UTC(), RealDates: opts.RealDates}
	for _, id := range opts.Only {
		if !slices.ContainsFunc(samples, func(s Sample) bool { return s.ID == id }) {
			ids := make([]string, len(samples))
			for i, s := range samples {
				ids[i] = s.ID
			}
			return nil, fmt.Errorf("locomo: no conversation %q in the file (it has %s)", id, strings.Join(ids, ", "))
		}
	}
	for i := range samples {
		s := &samples[i]
		if len(opts.Only) > 0 && !slices.Contains(opts.Only, s.ID) {
			continue
		}
		c, err := b.conversation(s)
		if err != nil {
			return nil, err
		}
		b.Conversations = append(b.Conversations, c)
	}
	if len(b.Conversations) == 0 {
		return nil, fmt.Errorf("locomo: no conversation")
	}
	return b, nil
}

func (b *Bench) conversation(s *Sample) (Conversation, error) {
	if len(s.Sessions) == 0 {
		return Conversation{}, fmt.Errorf("locomo: %s: no session with turns", s.ID)
	}
	first, last := s.Sessions[0].Time, s.Sessions[0].Time
	for _, sess := range s.Sessions {
		first, last = minTime(first, sess.Time), maxTime(last, sess.Time)
	}
	c := Conversation{SampleID: s.ID, Dev: IsDev(s.ID), Sessions: len(s.Sessions)}
	if !b.RealDates {
		c.Shift = b.At.Add(-LastSessionAge).Sub(last)
	}
	c.First, c.Last = first.Add(c.Shift), last.Add(c.Shift)
	when := make(map[string]time.Time) // turn id -> its (shifted) time
	for _, sess := range s.Sessions {
		t := sess.Time.Add(c.Shift)
		for _, turn := range sess.Turns {
			c.Points = append(c.Points, Point{
				ID: uint64(len(c.Points) + 1), DiaID: turn.DiaID, SessionID: sess.ID, Speaker: turn.Speaker,
				Text: TurnText(turn), Time: t,
			})
			when[turn.DiaID] = t
		}
	}
	for i, qa := range s.QA {
		if qa.Category == Adversarial {
			b.Skipped.Adversarial++
			continue
		}
		q := Question{SampleID: s.ID, Index: i, Category: qa.Category, Text: qa.Question, Recent: true}
		for _, id := range SplitEvidence(qa.Evidence) {
			t, ok := when[id]
			switch {
			case !ok:
				b.Dropped = append(b.Dropped, DroppedEvidence{SampleID: s.ID, Question: i, ID: id})
				continue
			case slices.Contains(q.Evidence, id):
				continue
			}
			q.Evidence = append(q.Evidence, id)
			q.Recent = q.Recent && b.recent(t)
		}
		if len(q.Evidence) == 0 {
			b.Skipped.NoEvidence++
			continue
		}
		c.Questions = append(c.Questions, q)
	}
	return c, nil
}

// recent says whether t lies within RecentWindow before At.
func (b *Bench) recent(t time.Time) bool {
	return !t.After(b.At) && !t.Before(b.At.Add(-RecentWindow))
}

// Turns is the number of turns of all conversations.
func (b *Bench) Turns() int {
	n := 0
	for i := range b.Conversations {
		n += len(b.Conversations[i].Points)
	}
	return n
}

// Questions is the number of questions asked.
func (b *Bench) Questions() int {
	n := 0
	for i := range b.Conversations {
		n += len(b.Conversations[i].Questions)
	}
	return n
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
