// Package foreign reads memories that other tools wrote into Qdrant: a
// Mapping says where a payload keeps the text, the times and the owner, and
// what to assume for what it does not say (docs/backfill.md). Built-in
// mappings cover mem0 and LangChain's Qdrant vector store; a mapping file
// (YAML or JSON) covers anything else.
package foreign

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.yaml.in/yaml/v3"

	"github.com/memrank/memrank/internal/jsonpath"
	"github.com/memrank/memrank/memory"
)

// Keys are payload key paths (Qdrant's syntax: "metadata.created_at"),
// tried in order: the first that holds a usable value wins. In a mapping
// file one key may be written as a plain string.
type Keys []string

// UnmarshalYAML reads a string or a list of strings.
func (k *Keys) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*k = Keys{s}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*k = list
	return nil
}

// Rule sets the source of memories whose payload holds Equals at Key (for
// example mem0's role "assistant": not the user's own words).
type Rule struct {
	Key    string `yaml:"key"`
	Equals string `yaml:"equals"`
	Source string `yaml:"source"`
}

// Defaults are what a mapping assumes when the payload says nothing.
type Defaults struct {
	MemoryType     string `yaml:"memory_type"`
	Source         string `yaml:"source"`
	ExtractorModel string `yaml:"extractor_model"`
	Grounding      string `yaml:"grounding"`
	DecayCategory  string `yaml:"decay_category"`
}

// Mapping says how to read one tool's payloads as memories.
type Mapping struct {
	Name string `yaml:"name"`
	// Text is where the memory's sentence is. Required.
	Text Keys `yaml:"text"`
	// CreatedAt is when the memory was first written; LastObservedAt when
	// it was last stated again (or changed). Strings in the forms memrank
	// reads (docs/memory-record.md) or Unix time as a number.
	CreatedAt      Keys `yaml:"created_at"`
	LastObservedAt Keys `yaml:"last_observed_at"`
	// Scope are the owner keys (user, agent, run): memories whose scope
	// values differ are never merged as duplicates.
	Scope Keys `yaml:"scope"`
	// Keys that may carry the memory fields themselves.
	MemoryType     Keys `yaml:"memory_type"`
	Source         Keys `yaml:"source"`
	ExtractorModel Keys `yaml:"extractor_model"`
	Grounding      Keys `yaml:"grounding"`
	DecayCategory  Keys `yaml:"decay_category"`
	// SourceRules override the default source, first match wins.
	SourceRules []Rule   `yaml:"source_rules"`
	Defaults    Defaults `yaml:"defaults"`
	// Assumptions say, for people, what the mapping takes for granted.
	Assumptions []string `yaml:"assumptions"`

	paths map[string][]jsonpath.Path
}

// Mem0 is mem0's payload: the fact in "data", its md5 in "hash",
// "created_at" and "updated_at" as ISO times with an offset, and the
// owner in "user_id", "agent_id" and "run_id".
func Mem0() *Mapping {
	m := &Mapping{
		Name:           "mem0",
		Text:           Keys{"data"},
		CreatedAt:      Keys{"created_at"},
		LastObservedAt: Keys{"updated_at"},
		Scope:          Keys{"user_id", "agent_id", "run_id"},
		MemoryType:     Keys{"memory_type"},
		SourceRules:    []Rule{{Key: "role", Equals: "assistant", Source: "weak_inference"}},
		Defaults:       Defaults{MemoryType: "fact", Source: "direct", Grounding: "supported"},
		Assumptions: []string{
			"mem0 extracts facts from what the user said: source direct, unless the payload's role is assistant (weak_inference)",
			"mem0 does not type its facts: memory_type fact; a payload memory_type that memrank does not know (procedural_memory) is left unscored",
			"mem0 keeps no count of re-observations: observations 0; updated_at (a fact restated or changed) is the last observation",
			"mem0 does not check grounding: supported, the write path's default",
			"the extractor is the LLM mem0 was configured with: give it (--extractor-model), else its quality is unknown (0.65)",
		},
	}
	_ = m.compile()
	return m
}

// LangChain is LangChain's Qdrant vector store: the text in
// "page_content", everything else under "metadata".
func LangChain() *Mapping {
	m := &Mapping{
		Name:           "langchain",
		Text:           Keys{"page_content"},
		CreatedAt:      Keys{"metadata.created_at", "metadata.timestamp", "metadata.date"},
		LastObservedAt: Keys{"metadata.updated_at"},
		Scope:          Keys{"metadata.user_id", "metadata.session_id"},
		MemoryType:     Keys{"metadata.memory_type"},
		Source:         Keys{"metadata.source_level"},
		Defaults:       Defaults{MemoryType: "fact", Source: "weak_inference", Grounding: "supported"},
		Assumptions: []string{
			"LangChain stores documents or conversation snippets, not extracted facts: source weak_inference (the write path's default)",
			"LangChain stores no time of its own: created_at from metadata.created_at, metadata.timestamp or metadata.date when the application put one there",
			"memory_type fact unless metadata.memory_type says otherwise; observations 0; grounding supported",
			"metadata.source is a document's origin (a file, a URL), not a memrank source level, so it is not read",
		},
	}
	_ = m.compile()
	return m
}

// Builtin returns the built-in mapping of that name.
func Builtin(name string) (*Mapping, bool) {
	switch strings.ToLower(name) {
	case "mem0":
		return Mem0(), true
	case "langchain":
		return LangChain(), true
	}
	return nil, false
}

// maxMappingBytes bounds a mapping file.
const maxMappingBytes = 1 << 20

// Parse reads a mapping file (YAML, or JSON, which is YAML too). Unknown
// keys are refused, so a misspelt key is not silently ignored.
func Parse(data []byte) (*Mapping, error) {
	if len(data) > maxMappingBytes {
		return nil, fmt.Errorf("mapping: %d bytes, at most %d", len(data), maxMappingBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m Mapping
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("mapping: %w", err)
	}
	if err := m.compile(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Validate checks that the mapping names a text key and that every key is a
// valid path.
func (m *Mapping) Validate() error { return m.compile() }

func (m *Mapping) compile() error {
	if len(m.Text) == 0 {
		return errors.New("mapping: text: no key names the text")
	}
	if m.Name == "" {
		m.Name = "file"
	}
	m.paths = map[string][]jsonpath.Path{}
	var errs []error
	for name, keys := range m.keySets() {
		for _, k := range keys {
			p, err := jsonpath.Parse(k)
			if err != nil {
				errs = append(errs, fmt.Errorf("mapping: %s: %q: %w", name, k, err))
				continue
			}
			m.paths[name] = append(m.paths[name], p)
		}
	}
	for i, r := range m.SourceRules {
		p, err := jsonpath.Parse(r.Key)
		if err != nil {
			errs = append(errs, fmt.Errorf("mapping: source_rules[%d].key: %q: %w", i, r.Key, err))
			continue
		}
		if r.Source == "" {
			errs = append(errs, fmt.Errorf("mapping: source_rules[%d].source is empty", i))
		}
		m.paths["rule"+strconv.Itoa(i)] = []jsonpath.Path{p}
	}
	return errors.Join(errs...)
}

func (m *Mapping) keySets() map[string]Keys {
	return map[string]Keys{"text": m.Text, "created_at": m.CreatedAt, "last_observed_at": m.LastObservedAt,
		"scope": m.Scope, "memory_type": m.MemoryType, "source": m.Source, "extractor_model": m.ExtractorModel,
		"grounding": m.Grounding, "decay_category": m.DecayCategory}
}

// Fields are what a mapping read from one payload. Empty strings and zero
// times are absent.
type Fields struct {
	Text           string
	CreatedAt      time.Time
	LastObservedAt time.Time
	// Scope joins the scope keys' values: equal scopes may merge.
	Scope          string
	MemoryType     string
	Source         string
	ExtractorModel string
	Grounding      string
	DecayCategory  string
	// Problems are values found but not usable ("created_at: not a time").
	Problems []string
}

// Read applies the mapping to a payload. It never fails: what is missing
// is left empty, what is unusable is listed in Problems.
func (m *Mapping) Read(payload map[string]*qdrant.Value) Fields {
	if m.paths == nil {
		_ = m.compile()
	}
	var f Fields
	f.Text = strings.TrimSpace(m.str("text", payload))
	f.CreatedAt = m.time("created_at", payload, &f)
	f.LastObservedAt = m.time("last_observed_at", payload, &f)
	var scope []string
	for _, p := range m.paths["scope"] {
		for _, v := range p.Values(payload) {
			scope = append(scope, p.String()+"="+scalar(v))
		}
	}
	f.Scope = strings.Join(scope, "\x00")
	f.MemoryType = or(m.str("memory_type", payload), m.Defaults.MemoryType)
	f.Source = m.str("source", payload)
	if f.Source == "" {
		f.Source = m.Defaults.Source
		for i, r := range m.SourceRules {
			if vs := m.paths["rule"+strconv.Itoa(i)][0].Values(payload); len(vs) > 0 && strings.EqualFold(scalar(vs[0]), r.Equals) {
				f.Source = r.Source
				break
			}
		}
	}
	f.ExtractorModel = or(m.str("extractor_model", payload), m.Defaults.ExtractorModel)
	f.Grounding = or(m.str("grounding", payload), m.Defaults.Grounding)
	f.DecayCategory = or(m.str("decay_category", payload), m.Defaults.DecayCategory)
	return f
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// str is the first non-empty string at the named keys.
func (m *Mapping) str(name string, payload map[string]*qdrant.Value) string {
	for _, p := range m.paths[name] {
		for _, v := range p.Values(payload) {
			if s, ok := v.GetKind().(*qdrant.Value_StringValue); ok && strings.TrimSpace(s.StringValue) != "" {
				return s.StringValue
			}
		}
	}
	return ""
}

// time is the first readable time at the named keys; an unreadable one is
// a problem.
func (m *Mapping) time(name string, payload map[string]*qdrant.Value, f *Fields) time.Time {
	for _, p := range m.paths[name] {
		for _, v := range p.Values(payload) {
			if jsonpath.IsNull(v) {
				continue
			}
			if t, ok := ParseTime(v); ok {
				return t
			}
			f.Problems = append(f.Problems, name+": not a time")
		}
	}
	return time.Time{}
}

// ParseTime reads a time as memrank does (docs/memory-record.md): a string
// in the accepted forms, or Unix time as a number (milliseconds from 1e11).
func ParseTime(v *qdrant.Value) (time.Time, bool) {
	var secs float64
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		return memory.ParseTime(k.StringValue)
	case *qdrant.Value_IntegerValue:
		n := k.IntegerValue
		switch {
		case n <= 0 || n > 1e14: // past the year 5000 even as milliseconds: not a time
			return time.Time{}, false
		case n >= 1e11:
			return time.UnixMilli(n).UTC(), true
		}
		return time.Unix(n, 0).UTC(), true
	case *qdrant.Value_DoubleValue:
		secs = k.DoubleValue
	default:
		return time.Time{}, false
	}
	if math.IsNaN(secs) || math.IsInf(secs, 0) || secs <= 0 {
		return time.Time{}, false
	}
	if secs >= 1e11 {
		secs /= 1000
	}
	if secs > 1e11 { // past the year 5000: not a time
		return time.Time{}, false
	}
	return time.UnixMicro(int64(math.Round(secs * 1e6))).UTC(), true // a double holds microseconds exactly
}

// scalar is a scope value as text.
func scalar(v *qdrant.Value) string {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		return k.StringValue
	case *qdrant.Value_IntegerValue:
		return strconv.FormatInt(k.IntegerValue, 10)
	case *qdrant.Value_DoubleValue:
		return strconv.FormatFloat(k.DoubleValue, 'g', -1, 64)
	case *qdrant.Value_BoolValue:
		return strconv.FormatBool(k.BoolValue)
	}
	return ""
}
