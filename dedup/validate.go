package dedup

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/textnorm"
)

// Limits of an observation beyond its text (Config.MaxTextBytes). They keep
// one observation's provenance small: it is copied into the memory's
// payload and into every audit record.
const (
	MaxCollectionBytes = 255   // Qdrant's own limit on a collection name
	MaxFieldBytes      = 256   // bytes of every other string field (ids, names, labels)
	MaxEntities        = 64    // entries of Entities
	MaxEntityBytes     = 256   // bytes of one entity
	MaxVectorLength    = 65536 // elements of Vector (Qdrant's own limit)
)

// groundings are the grounding verdicts an observation may carry, spelt as
// the API documents them; not_supported is accepted here and becomes the
// decision rejected.
var groundings = []string{"supported", "partial", "unknown", "not_supported"}

// Validate reports the first field of obs the write path refuses whatever
// its configuration and its store: lengths, blank or letterless text, the
// grounding, the extractor's log-probability, entities, the vector and the
// id of the memory it corrects. maxTextBytes bounds Text: the engine's
// Config.MaxTextBytes, DefaultMaxTextBytes for a caller without an engine.
//
// Observe and Correct call it first. Callers that refuse an observation
// before a write path is at hand (memrank import --check, memrank observe)
// call it themselves, so that they refuse exactly what the write path
// would. What depends on the engine is left to it: a tenant when tenancy is
// on, and the source and memory type, whose levels are the scoring
// parameters'.
//
// The error is an *InputError naming the field; its text is safe to show
// the caller.
func (obs Observation) Validate(maxTextBytes int) error {
	if err := checkCollection(obs.Collection); err != nil {
		return err
	}
	t := obs.Text
	switch {
	case len(t) > maxTextBytes:
		return inputError("text", "at most %d bytes, got %d", maxTextBytes, len(t))
	case strings.TrimSpace(t) == "":
		return inputError("text", "required and must not be blank")
	case !utf8.ValidString(t):
		return inputError("text", "not valid UTF-8")
	case textnorm.Normalize(t) == "":
		// Its text hash would be empty: every such text would be one memory.
		return inputError("text", "has no letters or digits")
	}
	for _, f := range [...]struct{ name, value string }{
		{"memory_type", obs.MemoryType}, {"source", obs.Source}, {"extractor_model", obs.ExtractorModel},
		{"grounding", obs.Grounding}, {"session_id", obs.SessionID}, {"turn_id", obs.TurnID},
		{"modality", obs.Modality}, {"decay_category", obs.DecayCategory},
		{"observation_id", obs.ObservationID}, {"corrects", obs.Corrects},
	} {
		if err := checkString(f.name, f.value, MaxFieldBytes); err != nil {
			return err
		}
	}
	if err := checkString("speaker", obs.Speaker, MaxEntityBytes); err != nil {
		return err
	}
	if obs.Speaker != "" && strings.TrimSpace(obs.Speaker) == "" {
		return inputError("speaker", "must not be blank (leave it out when unknown)")
	}
	if lp := obs.ExtractorLogprob; lp != nil {
		switch {
		case math.IsNaN(*lp) || math.IsInf(*lp, 0):
			return inputError("extractor_logprob", "want a finite number, got %v", *lp)
		case *lp > 0:
			return inputError("extractor_logprob", "a mean log-probability is at most 0, got %s", strconv.FormatFloat(*lp, 'g', -1, 64))
		}
	}
	// Only the documented spellings: memory.ParseGrounding's aliases are
	// for payloads written by other tools, not for what callers send.
	if obs.Grounding != "" && !slices.Contains(groundings, obs.Grounding) {
		return inputError("grounding", "want one of %s, got %q", strings.Join(groundings, ", "), obs.Grounding)
	}
	if len(obs.Entities) > MaxEntities {
		return inputError("entities", "at most %d entries, got %d", MaxEntities, len(obs.Entities))
	}
	for i, e := range obs.Entities {
		name := "entities[" + strconv.Itoa(i) + "]"
		if err := checkString(name, e, MaxEntityBytes); err != nil {
			return err
		}
		if strings.TrimSpace(e) == "" {
			return inputError(name, "must not be blank")
		}
	}
	// nil embeds the text; an empty vector is a caller's mistake, not a
	// request to embed.
	switch v := obs.Vector; {
	case v != nil && len(v) == 0:
		return inputError("vector", "must not be empty (leave it out to embed the text)")
	case len(v) > MaxVectorLength:
		return inputError("vector", "at most %d elements, got %d", MaxVectorLength, len(v))
	}
	for i, x := range obs.Vector {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return inputError("vector["+strconv.Itoa(i)+"]", "not a finite number")
		}
	}
	if obs.Attribution != "" {
		if _, ok := attributions[obs.Attribution]; !ok {
			return inputError("attribution", "want one of self, reported, hearsay, got %.80q", obs.Attribution)
		}
	}
	if obs.Corrects != "" {
		return CheckMemoryID("corrects", obs.Corrects)
	}
	return nil
}

// Validate reports the first field of c the write path refuses, as
// Observation.Validate does; Confirm calls it first.
func (c Confirmation) Validate() error {
	if err := checkCollection(c.Collection); err != nil {
		return err
	}
	if err := CheckMemoryID("id", c.MemoryID); err != nil {
		return err
	}
	for _, f := range [...]struct{ name, value string }{
		{"observation_id", c.ObservationID}, {"session_id", c.SessionID}, {"turn_id", c.TurnID},
	} {
		if err := checkString(f.name, f.value, MaxFieldBytes); err != nil {
			return err
		}
	}
	return nil
}

// CheckMemoryID refuses, as an *InputError on field, what is not a memory
// id as Qdrant takes a point id: an unsigned 64-bit integer, or a UUID in
// hyphenated or simple form. The native API checks ids in its paths with
// it, so that they read as the write path's own.
func CheckMemoryID(field, id string) error {
	if !validPointID(id) {
		return inputError(field, "want a memory id (a UUID or an unsigned integer), got %.80q", id)
	}
	return nil
}

func validPointID(s string) bool {
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return true
	}
	switch len(s) {
	case 36:
		for i := range len(s) {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if s[i] != '-' {
					return false
				}
			} else if !isHex(s[i]) {
				return false
			}
		}
		return true
	case 32:
		for i := range len(s) {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// errAuditCollection refuses writes and reads of memrank's own audit
// companions through the memory API: their records must not be rewritten.
var errAuditCollection = &InputError{Field: "collection", Reason: "names one of memrank's companions (" + AuditSuffix + ", " +
	memory.BackfillSuffix + ", " + memory.ReembedSuffix + "), not a memory collection"}

// checkCollection is the rule for a collection every operation names.
func checkCollection(c string) error {
	if c == "" {
		return inputError("collection", "required")
	}
	if err := checkString("collection", c, MaxCollectionBytes); err != nil {
		return err
	}
	if memory.IsCompanion(c) {
		return errAuditCollection
	}
	return nil
}

// checkString bounds a string field. Strings go into protobuf payloads,
// which must be UTF-8.
func checkString(field, s string, max int) error {
	switch {
	case len(s) > max:
		return inputError(field, "at most %d bytes, got %d", max, len(s))
	case !utf8.ValidString(s):
		return inputError(field, "not valid UTF-8")
	}
	return nil
}

func inputError(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// truncate cuts s to 64 bytes for an error text.
func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "..."
		}
	}
	return ""
}
