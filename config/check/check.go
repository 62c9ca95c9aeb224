// Package check is what a component's configuration section needs to
// validate itself: a Checker that collects Problems, each naming a key of the
// section and the bad value in the words memrank's configuration errors use.
// It imports only the standard library, so the lowest packages (scoring,
// memory) can own their sections; the config package mounts each section
// under its key ("oversample" in section "rank" is reported as
// "config: rank.oversample: 0 is less than 1").
package check

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Problem is one bad value: its key, relative to the section, and what is
// wrong with it. Text may name other keys of the section with Ref.
type Problem struct {
	Key  string
	Text string
}

func (p *Problem) Error() string {
	if p.Key == "" {
		return Unref(p.Text)
	}
	return p.Key + ": " + Unref(p.Text)
}

// The marks around a key Ref names; the config package puts the section's
// key inside them when it mounts the section, and Unref removes them.
const (
	RefOpen  = "\x00key:"
	RefClose = "\x00"
)

// Ref names another key of the same section inside a problem's text ("0.95
// is above "+Ref("same_threshold")), so that the text names it from the
// root once the section is mounted: "dedup.same_threshold".
func Ref(key string) string { return RefOpen + key + RefClose }

// Unref removes the marks Ref puts around keys, leaving the keys.
func Unref(s string) string {
	for {
		i := strings.Index(s, RefOpen)
		if i < 0 {
			return s
		}
		rest := s[i+len(RefOpen):]
		j := strings.Index(rest, RefClose)
		if j < 0 {
			return s
		}
		s = s[:i] + rest[:j] + rest[j+len(RefClose):]
	}
}

// Checker collects a section's problems.
type Checker struct{ errs []error }

// Add records a problem with key.
func (k *Checker) Add(key, format string, args ...any) {
	k.errs = append(k.errs, &Problem{Key: key, Text: fmt.Sprintf(format, args...)})
}

// Sub records the problems of a sub-section's Validate under key, so that
// a section can own a nested one (upstream.tls): their keys, and the keys
// their texts name with Ref, get key in front.
func (k *Checker) Sub(key string, err error) {
	if err == nil {
		return
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		p, ok := e.(*Problem)
		if !ok {
			k.errs = append(k.errs, &Problem{Key: key, Text: e.Error()})
			continue
		}
		sub := key
		if p.Key != "" {
			sub = key + "." + p.Key
		}
		k.errs = append(k.errs, &Problem{Key: sub, Text: strings.ReplaceAll(p.Text, RefOpen, RefOpen+key+".")})
	}
}

// Err is every problem recorded, joined; nil when there is none.
func (k *Checker) Err() error { return errors.Join(k.errs...) }

// Unit checks that v is in [0, 1]; NaN is not.
func (k *Checker) Unit(key string, v float64) {
	if !(v >= 0 && v <= 1) {
		k.Add(key, "%s is outside [0, 1]", Float(v))
	}
}

// UnitMap checks every entry of a table of [0, 1] values and its names.
func (k *Checker) UnitMap(key string, m map[string]float64) {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if name == "" {
			k.Add(key, "has an entry with an empty name")
			continue
		}
		k.Unit(key+"."+name, m[name])
	}
}

// Positive checks a finite v > 0 (half-lives, slopes).
func (k *Checker) Positive(key string, v float64) {
	switch {
	case !(v > 0):
		k.Add(key, "%s is not positive", Float(v))
	case math.IsInf(v, 0):
		k.Add(key, "%s is not finite", Float(v))
	}
}

// Timeout checks a duration that bounds a wait or paces a loop.
func (k *Checker) Timeout(key string, d time.Duration) {
	if d <= 0 {
		k.Add(key, "%s is not positive", Duration(d))
	}
}

// AtLeast checks v >= min.
func (k *Checker) AtLeast(key string, v, min int) {
	if v < min {
		k.Add(key, "%d is less than %d", v, min)
	}
}

// OneOf checks an enumeration.
func (k *Checker) OneOf(key, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		k.Add(key, "%s is not one of %s", Quote(v), strings.Join(allowed, ", "))
	}
}

// NonEmpty checks a required name.
func (k *Checker) NonEmpty(key, v string) {
	if v == "" {
		k.Add(key, "must not be empty")
	}
}

// HTTPURL checks an optional base URL.
func (k *Checker) HTTPURL(key, v string) {
	if v == "" {
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		k.Add(key, "%s is not an http(s) URL", Quote(v))
	}
}

// HostPort checks an address; minPort is 0 for listen addresses (the OS
// picks a port), 1 for addresses memrank dials.
func (k *Checker) HostPort(key, v string, minPort int) {
	_, port, err := net.SplitHostPort(v)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < minPort || n > 65535 {
		k.Add(key, "%s is not host:port", Quote(v))
	}
}

// Secret checks an API key without showing it. A key with white space or
// control characters is almost always a copy-paste accident (a trailing
// newline from a mounted secret) and would fail at the first request.
func (k *Checker) Secret(key, v string) {
	if strings.IndexFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		k.Add(key, "contains white space or control characters (value not shown)")
	}
}

// OpenAI checks the section of an OpenAI-compatible client that is in use
// (because says why, naming keys with Ref): it needs a model, and OpenAI's
// own API (no base_url) needs an api_key.
func (k *Checker) OpenAI(because, baseURL, model, apiKey string) {
	if model == "" {
		k.Add("model", "must not be empty when %s", because)
	}
	if baseURL == "" && apiKey == "" {
		k.Add("api_key", "must not be empty when %s and %s is empty (OpenAI's API)", because, Ref("base_url"))
	}
}

// Masked is what a set secret prints as.
const Masked = "***"

// MaskedKey is one entry of a table keyed by secrets (tenancy.api_keys),
// with the placeholder it is shown under.
type MaskedKey struct {
	Placeholder, Key, Value string
}

// MaskKeys orders a table keyed by secrets by value, then key, and numbers
// the entries "***1", "***2", ...: the same numbering names them in masked
// YAML and in errors, so the output says how many keys each value has
// without showing any.
func MaskKeys(m map[string]string) []MaskedKey {
	out := make([]MaskedKey, 0, len(m))
	for k, v := range m {
		out = append(out, MaskedKey{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b MaskedKey) int {
		return cmp.Or(cmp.Compare(a.Value, b.Value), cmp.Compare(a.Key, b.Key))
	})
	for i := range out {
		out[i].Placeholder = Masked + strconv.Itoa(i+1)
	}
	return out
}

// maxShown bounds how much of a bad string value an error repeats, so a
// multi-kilobyte value does not flood the log.
const maxShown = 64

// Quote renders a string value for an error message.
func Quote(s string) string {
	if utf8.RuneCountInString(s) > maxShown {
		r := []rune(s)
		return strconv.Quote(string(r[:maxShown])) + "..."
	}
	return strconv.Quote(s)
}

// Float renders a float as the user would have typed it.
func Float(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Duration renders a duration the way it is written in a file: "1h", not
// "1h0m0s". time.ParseDuration reads every output back.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") { // "2m0s" -> "2m", "1h0m0s" -> "1h0m"
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") { // "1h0m" -> "1h"
		s = s[:len(s)-2]
	}
	return s
}
