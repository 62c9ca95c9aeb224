package dedup

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memrank/memrank/textnorm"
)

// Claim is what the fold rules read of one statement (docs/write-path.md,
// "Who said what"): whose it is and what it asserts. Two statements fold
// (at any tier, on write and on read) only when their subjects agree and
// neither differs from the other in a negation, a number, a name or one
// swapped word. A Claim is computed once per text and compared many times.
type Claim struct {
	// speaker is who said it: the observation's speaker, else a leading
	// "Name:" of the text; "" unknown. Lower-cased.
	speaker string
	// subjects are whom it is about, lower-cased: the speaker for a
	// first-person statement of a known speaker, else the entities its
	// extractor saw, else the speaker; empty when none of those is known (a memory of the one
	// user an agent serves: "Uses Neovim"). The names in the text are not
	// subjects: without an entity recogniser "lives in Lisbon" and "lives
	// in Porto" would name two subjects of one claim, and in conversation
	// a name is mostly the listener's ("See you there, Gina!"), which would
	// fold Gina's own "See you tomorrow!" into it (11 such folds across
	// speakers on LoCoMo). Names count in Differs instead.
	subjects []string
	// names are the proper names of the text (without a "Name:" prefix),
	// lower-cased and sorted; words are all its words, normalised and
	// sorted, to tell whether the other text mentions a name at all.
	names []string
	words []string
	// fields are the normalised words of the text, in order.
	fields []string
	sig    signals
}

// ReadClaim reads the claim of text, said by speaker ("" unknown: a leading
// "Name:" of the text then names the speaker), with the entities its
// extractor saw (may be nil).
func ReadClaim(text, speaker string, entities []string) Claim {
	prefix, body := SplitSpeaker(text)
	if speaker == "" {
		speaker = prefix
	}
	c := Claim{speaker: strings.ToLower(strings.TrimSpace(speaker)), fields: strings.Fields(textnorm.Normalize(body))}
	c.sig = signalsOf(c.fields)
	c.names, c.words = namesOf(body)
	switch {
	case c.speaker != "" && firstPerson(c.fields):
		c.subjects = []string{c.speaker}
	case len(entities) > 0:
		for _, e := range entities {
			if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
				c.subjects = append(c.subjects, e)
			}
		}
	case c.speaker != "":
		c.subjects = []string{c.speaker}
	}
	return c
}

// SameSubject reports whether two claims may be about the same subject:
// when either subject is unknown (an agent's memories of its one user), or
// they share one. Two people's first-person statements, or what two people
// said of no one in particular ("That's awesome!"), never are.
func (c Claim) SameSubject(o Claim) bool {
	if len(c.subjects) == 0 || len(o.subjects) == 0 {
		return true
	}
	for _, s := range c.subjects {
		if slices.Contains(o.subjects, s) {
			return true
		}
	}
	return false
}

// Differs reports whether two claims about one subject assert different
// things, so that no similarity alone may fold them: a negation on one side
// only, another number, a name one says and the other never mentions
// ("lives in Berlin" / "lives in Munich"; "I work at Initech now, not Acme"
// / "I don't work at Acme"), or exactly one content word swapped (seed
// 001's heuristics, and docs/write-path.md). A name the other text has in
// another place ("Dana uses Neovim" / "Neovim is the editor Dana uses") is
// the same name.
func (c Claim) Differs(o Claim) bool {
	return c.differsInValue(o) || !subset(c.names, o.words) || !subset(o.names, c.words)
}

// differsInValue is Differs without the names: a negation on one side
// only, another number, or one swapped word. Corroboration reads only
// this: two related claims about a shared entity name different things by
// design ("Dana uses Neovim", "Neovim is installed on Dana's laptop").
func (c Claim) differsInValue(o Claim) bool {
	if len(c.sig.negations)%2 != len(o.sig.negations)%2 || !slices.Equal(c.sig.numbers, o.sig.numbers) {
		return true
	}
	return swapsOneWord(c.fields, o.fields)
}

// Corroborates reports whether c may support o as a related claim of
// another source: same subject, and no differing value.
func (c Claim) Corroborates(o Claim) bool { return c.SameSubject(o) && !c.differsInValue(o) }

// withoutNegations is c with its negations dropped, to tell a pair that
// differs only by one.
func (c Claim) withoutNegations() Claim {
	c.sig.negations = nil
	return c
}

// Folds reports whether the two claims may fold on similarity (or a cached
// verdict) alone: same subject, and no differing claim.
func (c Claim) Folds(o Claim) bool { return c.SameSubject(o) && !c.Differs(o) }

// Subjects are whom the claim is about, lower-cased (see Claim).
func (c Claim) Subjects() []string { return c.subjects }

// Speaker is who said it, lower-cased ("" unknown).
func (c Claim) Speaker() string { return c.speaker }

// subset reports whether every element of a (sorted) is in b (sorted).
func subset(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

// SplitSpeaker splits a leading "Name:" off text ("Caroline: I went ..."),
// as conversation transcripts and memrank eval --locomo write turns: the
// name (one to three capitalised words) and the rest. A label that is not a
// name ("Note:", "Update:") is no speaker. Without one: "" and text.
func SplitSpeaker(text string) (speaker, body string) {
	i := strings.IndexByte(text, ':')
	if i <= 0 || i > 60 || i+1 >= len(text) || text[i+1] != ' ' {
		return "", text
	}
	head := strings.TrimSpace(text[:i])
	words := strings.Fields(head)
	if len(words) == 0 || len(words) > 3 {
		return "", text
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) || strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '-' && r != '.' }) >= 0 {
			return "", text
		}
	}
	if notSpeakers[strings.ToLower(head)] {
		return "", text
	}
	return head, strings.TrimSpace(text[i+1:])
}

// notSpeakers are labels a text may start with that name no one.
var notSpeakers = map[string]bool{
	"note": true, "notes": true, "update": true, "re": true, "fyi": true, "todo": true, "reminder": true,
	"summary": true, "question": true, "answer": true, "q": true, "a": true, "tip": true, "warning": true,
	"important": true, "edit": true, "ps": true, "fact": true, "preference": true, "event": true, "ok": true,
	"yes": true, "no": true, "update from the team": true, "status": true, "decision": true, "idea": true,
}

// firstPerson reports whether a text, given as its normalised words, speaks
// in the first person: its subject is then whoever said it.
func firstPerson(words []string) bool {
	for _, w := range words {
		if firstPersonWords[w] {
			return true
		}
	}
	return false
}

// firstPersonWords are the first-person words, as Normalize leaves them
// ("I'm" is "im"). "were", "well" and "id" are left out: they are more
// often other words.
var firstPersonWords = map[string]bool{
	"i": true, "im": true, "ive": true, "me": true, "my": true, "mine": true, "myself": true,
	"we": true, "weve": true, "us": true, "our": true, "ours": true, "ourselves": true,
}

// namesOf returns the proper names of text (textnorm.Words) and all its
// words, normalised and sorted ("Bob lives in Berlin": berlin). A name of
// several words counts word by word, and a possessive is its name
// ("Granite's lead": granite).
func namesOf(text string) (names, words []string) {
	for raw, name := range textnorm.Words(text) {
		w := normalizeWord(raw)
		if w == "" {
			continue
		}
		words = append(words, w)
		if name && !firstPersonWords[w] {
			names = append(names, w)
		}
	}
	slices.Sort(names)
	slices.Sort(words)
	return slices.Compact(names), slices.Compact(words)
}

// normalizeWord is textnorm.Normalize of one word of letters: for ASCII,
// its lower case, which allocates nothing for a word already in it (most
// are); read once per word of every claim the read path compares.
func normalizeWord(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return textnorm.Normalize(w)
		}
	}
	return strings.ToLower(w)
}
