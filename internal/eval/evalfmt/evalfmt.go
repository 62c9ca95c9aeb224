// Package evalfmt is how memrank eval's reports (the labeled set's and
// LoCoMo's) write their numbers, so that both read alike: JSON floats that
// are null when not a number, three-decimal table cells, counted nouns.
package evalfmt

import (
	"math"
	"strconv"
)

// Float is a float64 written to JSON as null when it is not a number (a
// mean over no questions), which encoding/json refuses.
type Float float64

// MarshalJSON writes f, or null for NaN and infinities.
func (f Float) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// F3 is a table cell of f with three decimals, "-" when f is not a number.
func F3(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}

// Plural is n with its noun: "1 question", "3 questions".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
