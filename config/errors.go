package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/memrank/memrank/config/check"
)

// ErrUnknownKey is matched (errors.Is) by every error about a key memrank
// does not have: a typo in the file, a MEMRANK_ variable that maps to no key,
// a flag bound to a key that does not exist.
var ErrUnknownKey = errors.New("unknown key")

// Error is one problem with the configuration. Load and Validate return them
// joined with errors.Join, one per line; use errors.As on the joined error's
// Unwrap() []error to list them. The text is described in the package doc.
type Error struct {
	// Source is where the value was read: the file path as given, "$NAME"
	// for an environment variable or "--name" for a flag. It is "" for
	// problems Validate finds in the merged configuration.
	Source string
	// Key is the full dotted key ("scoring.weights.source", list elements
	// as "scoring.extractor.models[0].pattern"). It is "" when the problem
	// is with the source as a whole (an unreadable file, bad YAML).
	Key string
	// Problem says what is wrong and names the offending value; a secret's
	// value is never shown.
	Problem string

	// Hint says what to do instead, for a key that was removed.
	Hint string

	err error // ErrUnknownKey or the underlying cause, for errors.Is
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	if errors.Is(e.err, ErrUnknownKey) {
		fmt.Fprintf(&b, "unknown key %q", e.Key)
		if e.Hint != "" {
			b.WriteString(" (")
			b.WriteString(e.Hint)
			b.WriteString(")")
		}
		return b.String()
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(check.Unref(e.Problem))
	return b.String()
}

// Unwrap gives ErrUnknownKey for unknown keys and the cause (such as
// fs.ErrNotExist's errno) for an unreadable file.
func (e *Error) Unwrap() error { return e.err }

func quote(s string) string              { return check.Quote(s) }
func fmtFloat(v float64) string          { return check.Float(v) }
func fmtDuration(d time.Duration) string { return check.Duration(d) }

// describe renders a raw value from a file, the environment or a flag for an
// error message. For a secret only its kind is given.
func describe(raw any, secret bool) string {
	kind, shown := describeParts(raw)
	if secret {
		return kind + " (secret, not shown)"
	}
	return shown
}

// describeParts returns the kind of a raw value ("a string") and the value as
// shown in an error message.
func describeParts(raw any) (kind, shown string) {
	switch v := raw.(type) {
	case nil:
		return "null", "null"
	case string:
		return "a string", quote(v)
	case bool:
		return "a boolean", strconv.FormatBool(v)
	case time.Duration:
		return "a duration", fmtDuration(v)
	case time.Time:
		return "a timestamp", "a timestamp"
	case float32:
		return "a number", fmtFloat(float64(v))
	case float64:
		return "a number", fmtFloat(v)
	}
	rv := reflect.ValueOf(raw)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a number", strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a number", strconv.FormatUint(rv.Uint(), 10)
	case reflect.Map:
		return "a mapping", "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list", "a list"
	}
	return "a value", fmt.Sprintf("a value of type %T", raw)
}
