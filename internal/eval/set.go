package eval

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/qdrantjson"
)

// Limits of the set format.
const (
	// DefaultLimit is a query's limit when it gives none.
	DefaultLimit = 10
	// MaxLimit is the largest limit (the native API's).
	MaxLimit = 1000
	// maxLine bounds one line: a memory with a few thousand dimensions and
	// a large payload fits many times over.
	maxLine = 64 << 20
	// maxErrors is how many line errors Parse lists before it gives up.
	maxErrors = 20
)

// Header is the set's first line.
type Header struct {
	Name     string
	Version  int
	Seed     int64
	Now      time.Time // the instant the queries are asked
	Distance qdrant.Distance
	Dim      int
	Embedder string // how the vectors were made (descriptive)
	Notes    string
}

// Memory is one memory of the set.
type Memory struct {
	Line    int
	ID      string // the id's key: decimal, or the canonical UUID
	Point   *qdrant.PointId
	Vector  []float32 // nil until EmbedTexts when the line gave a text only
	Text    string
	Payload map[string]*qdrant.Value
	Topic   string
	Fact    string
	Correct *bool
	Role    string
}

// Query is one query of the set.
type Query struct {
	Line     int
	ID       string
	Vector   []float32 // nil until EmbedTexts when the line gave a text only
	Text     string
	Topic    string
	Relevant map[string]int // memory id key -> grade 1..3
	Limit    int
}

// Set is a parsed labeled set.
type Set struct {
	File     string
	Header   Header
	Memories []Memory
	Queries  []Query
	byID     map[string]int // memory id key -> index in Memories
}

// Memory returns the memory with id key, if the set has it.
func (s *Set) Memory(id string) (*Memory, bool) {
	i, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return &s.Memories[i], true
}

// Open reads and parses the set in path (gunzipped when the name ends in
// .gz). Errors in the file name their line as path:N.
func Open(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	return Parse(r, path)
}

// Parse reads a set from r; name is the file name errors start with. It
// reports every bad line, up to 20, joined.
func Parse(r io.Reader, name string) (*Set, error) {
	p := parser{set: &Set{File: name, byID: map[string]int{}}, name: name,
		queryLines: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := p.line(line, b); err != nil {
			p.fail(line, err)
			if !p.headerOK {
				// Without the header's dim every vector would be reported too.
				return nil, errors.Join(p.errs...)
			}
		}
		if len(p.errs) >= maxErrors {
			p.errs = append(p.errs, fmt.Errorf("%s: too many errors, stopped at line %d", name, line))
			return nil, errors.Join(p.errs...)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line is longer than %d bytes", maxLine)
		}
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if !p.header && len(p.errs) == 0 {
		return nil, fmt.Errorf("%s: empty: no set header", name)
	}
	if len(p.errs) == 0 {
		// Only on a clean file: a bad memory line would make its id look
		// missing.
		p.checkRelevant()
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return p.set, nil
}

type parser struct {
	set        *Set
	name       string
	header     bool // a header line was read
	headerOK   bool // and it parsed
	errs       []error
	queryLines map[string]int // query id -> line
}

func (p *parser) fail(line int, err error) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %w", p.name, line, err))
}

// line parses one non-blank line.
func (p *parser) line(n int, b []byte) error {
	fields, err := object(b)
	if err != nil {
		return err
	}
	if len(fields) != 1 {
		keys := make([]string, len(fields))
		for i, f := range fields {
			keys[i] = f.key
		}
		return fmt.Errorf("want one object with one key (set, memory or query), got %d: %s", len(fields), strings.Join(keys, ", "))
	}
	kind, body := fields[0].key, fields[0].value
	if !p.header && kind != "set" {
		return fmt.Errorf(`the first line must be the header {"set": {...}}, got %q`, kind)
	}
	switch kind {
	case "set":
		if p.header {
			return errors.New(`a second "set" header`)
		}
		p.header = true
		h, err := parseHeader(body)
		if err != nil {
			return fmt.Errorf("set: %w", err)
		}
		p.set.Header, p.headerOK = h, true
		return nil
	case "memory":
		m, err := p.memory(n, body)
		if err != nil {
			return err
		}
		if prev, dup := p.set.byID[m.ID]; dup {
			return fmt.Errorf("memory %s: the id of line %d too", m.ID, p.set.Memories[prev].Line)
		}
		p.set.byID[m.ID] = len(p.set.Memories)
		p.set.Memories = append(p.set.Memories, m)
		return nil
	case "query":
		q, err := p.query(n, body)
		if err != nil {
			return err
		}
		if prev, dup := p.queryLines[q.ID]; dup {
			return fmt.Errorf("query %q: the id of line %d too", q.ID, prev)
		}
		p.queryLines[q.ID] = n
		p.set.Queries = append(p.set.Queries, q)
		return nil
	}
	return fmt.Errorf("unknown line kind %q (want set, memory or query)", kind)
}

var headerKeys = []string{"name", "version", "seed", "now", "distance", "dim", "embedder", "notes"}

func parseHeader(b json.RawMessage) (Header, error) {
	h := Header{Distance: qdrant.Distance_Cosine}
	fields, err := knownObject(b, headerKeys)
	if err != nil {
		return h, err
	}
	var hasName, hasVersion, hasNow, hasDim bool
	for _, f := range fields {
		switch f.key {
		case "name":
			hasName = true
			err = str(f.value, &h.Name)
		case "version":
			hasVersion = true
			var v int64
			if v, err = integer(f.value, 1, math.MaxInt32); err == nil && v != 1 {
				err = fmt.Errorf("%d is not a version this memrank reads (1)", v)
			}
			h.Version = int(v)
		case "seed":
			h.Seed, err = integer(f.value, math.MinInt64, math.MaxInt64)
		case "now":
			hasNow = true
			var s string
			if err = str(f.value, &s); err == nil {
				if h.Now, err = time.Parse(time.RFC3339Nano, s); err != nil {
					err = fmt.Errorf("%q is not an RFC 3339 time", s)
				}
			}
		case "distance":
			var s string
			if err = str(f.value, &s); err == nil {
				switch {
				case strings.EqualFold(s, "Cosine"):
					h.Distance = qdrant.Distance_Cosine
				case strings.EqualFold(s, "Dot"):
					h.Distance = qdrant.Distance_Dot
				default:
					err = fmt.Errorf("%q: memrank re-ranks Cosine and Dot collections only", s)
				}
			}
		case "dim":
			hasDim = true
			var d int64
			d, err = integer(f.value, 1, 65536)
			h.Dim = int(d)
		case "embedder":
			err = str(f.value, &h.Embedder)
		case "notes":
			err = str(f.value, &h.Notes)
		}
		if err != nil {
			return h, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	for _, req := range []struct {
		key string
		ok  bool
	}{{"name", hasName}, {"version", hasVersion}, {"now", hasNow}, {"dim", hasDim}} {
		if !req.ok {
			return h, fmt.Errorf("%s: required", req.key)
		}
	}
	return h, nil
}

var memoryKeys = []string{"id", "vector", "text", "payload", "topic", "fact", "correct", "role"}

func (p *parser) memory(line int, b json.RawMessage) (Memory, error) {
	m := Memory{Line: line}
	fields, err := knownObject(b, memoryKeys)
	if err != nil {
		return m, fmt.Errorf("memory: %w", err)
	}
	// The id first, so that every later error can name the memory.
	for _, f := range fields {
		if f.key == "id" {
			if m.Point, m.ID, err = parseID(f.value); err != nil {
				return m, fmt.Errorf("memory: id: %w", err)
			}
		}
	}
	if m.Point == nil {
		return m, errors.New("memory: id: required")
	}
	var hasPayload bool
	for _, f := range fields {
		switch f.key {
		case "vector":
			m.Vector, err = p.vector(f.value)
		case "text":
			err = str(f.value, &m.Text)
			if err == nil && strings.TrimSpace(m.Text) == "" {
				err = errors.New("empty")
			}
		case "payload":
			hasPayload = true
			m.Payload, err = qdrantjson.DecodePayload(f.value)
		case "topic":
			err = str(f.value, &m.Topic)
		case "fact":
			err = str(f.value, &m.Fact)
		case "correct":
			var c bool
			if err = json.Unmarshal(f.value, &c); err != nil || isNull(f.value) {
				err = errors.New("want true or false")
			}
			m.Correct = &c
		case "role":
			err = str(f.value, &m.Role)
		}
		if err != nil {
			return m, fmt.Errorf("memory %s: %s: %w", m.ID, f.key, err)
		}
	}
	if !hasPayload {
		return m, fmt.Errorf("memory %s: payload: required", m.ID)
	}
	if m.Vector == nil && m.Text == "" {
		return m, fmt.Errorf("memory %s: vector or text: one is required", m.ID)
	}
	return m, nil
}

var queryKeys = []string{"id", "vector", "text", "topic", "relevant", "limit"}

func (p *parser) query(line int, b json.RawMessage) (Query, error) {
	q := Query{Line: line, Limit: DefaultLimit}
	fields, err := knownObject(b, queryKeys)
	if err != nil {
		return q, fmt.Errorf("query: %w", err)
	}
	for _, f := range fields {
		if f.key == "id" {
			if err := str(f.value, &q.ID); err != nil {
				return q, fmt.Errorf("query: id: %w", err)
			}
		}
	}
	if q.ID == "" {
		return q, errors.New("query: id: required (a non-empty string)")
	}
	for _, f := range fields {
		switch f.key {
		case "vector":
			q.Vector, err = p.vector(f.value)
		case "text":
			err = str(f.value, &q.Text)
			if err == nil && strings.TrimSpace(q.Text) == "" {
				err = errors.New("empty")
			}
		case "topic":
			err = str(f.value, &q.Topic)
		case "relevant":
			q.Relevant, err = relevant(f.value)
		case "limit":
			var l int64
			l, err = integer(f.value, 1, MaxLimit)
			q.Limit = int(l)
		}
		if err != nil {
			return q, fmt.Errorf("query %q: %s: %w", q.ID, f.key, err)
		}
	}
	if q.Vector == nil && q.Text == "" {
		return q, fmt.Errorf("query %q: vector or text: one is required", q.ID)
	}
	return q, nil
}

// checkRelevant reports relevant ids that are no memory of the set (after
// every line is read: memories may follow the queries).
func (p *parser) checkRelevant() {
	for _, q := range p.set.Queries {
		var missing []string
		for id := range q.Relevant {
			if _, ok := p.set.byID[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			p.fail(q.Line, fmt.Errorf("query %q: relevant: %s: not a memory of the set", q.ID, strings.Join(missing, ", ")))
		}
	}
}

// vector reads an array of finite numbers of the header's dim.
func (p *parser) vector(b json.RawMessage) ([]float32, error) {
	var xs []float64
	if err := json.Unmarshal(b, &xs); err != nil || xs == nil {
		return nil, errors.New("want an array of numbers")
	}
	if len(xs) != p.set.Header.Dim {
		return nil, fmt.Errorf("%d numbers, the set's dim is %d", len(xs), p.set.Header.Dim)
	}
	out := make([]float32, len(xs))
	for i, x := range xs {
		if math.Abs(x) > math.MaxFloat32 {
			return nil, fmt.Errorf("[%d]: %v does not fit a float32", i, x)
		}
		out[i] = float32(x)
	}
	return out, nil
}

// relevant reads {"id": grade} with grades 1..3.
func relevant(b json.RawMessage) (map[string]int, error) {
	fields, err := object(b)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(fields))
	for _, f := range fields {
		key, err := IDKey(f.key)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f.key, err)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%q: the same id as another key", f.key)
		}
		g, err := integer(f.value, 1, 3)
		if err != nil {
			return nil, fmt.Errorf("%q: grade: %w", f.key, err)
		}
		out[key] = int(g)
	}
	return out, nil
}

// IDKey is the key of a point id written as text: the decimal of an
// unsigned integer or the canonical (lower-case) form of a UUID, as the
// store returns it.
func IDKey(s string) (string, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return strconv.FormatUint(n, 10), nil
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", errors.New("not a point id (an unsigned integer or a UUID)")
	}
	return u.String(), nil
}

// PointKey is the key of a store's point id.
func PointKey(id *qdrant.PointId) string {
	if u, ok := id.GetPointIdOptions().(*qdrant.PointId_Uuid); ok {
		if p, err := uuid.Parse(u.Uuid); err == nil {
			return p.String()
		}
		return u.Uuid
	}
	return strconv.FormatUint(id.GetNum(), 10)
}

// parseID reads a JSON id: an unsigned integer, read from its digits (no
// float64 on the way, so every u64 survives), or a UUID string.
func parseID(b json.RawMessage) (*qdrant.PointId, string, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, "", err
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, "", fmt.Errorf("%q is not a UUID (string ids are UUIDs)", s)
		}
		return qdrant.NewID(u.String()), u.String(), nil
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return nil, "", fmt.Errorf("%.40s is not an unsigned 64-bit integer or a UUID string", b)
	}
	return qdrant.NewIDNum(n), strconv.FormatUint(n, 10), nil
}

// field is one key of a JSON object, in the order written.
type field struct {
	key   string
	value json.RawMessage
}

// object reads a JSON object's keys in order, refusing duplicates (which
// encoding/json would silently resolve to the last).
func object(b []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %s", jsonError(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", kind(tok))
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %s", jsonError(err))
		}
		key := tok.(string) // object keys are strings once Token succeeded
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %s", jsonError(err))
		}
		for _, f := range out {
			if f.key == key {
				return nil, fmt.Errorf("duplicate key %q", key)
			}
		}
		out = append(out, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %s", jsonError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON object")
	}
	return out, nil
}

// knownObject is object with every key among known.
func knownObject(b []byte, known []string) ([]field, error) {
	fields, err := object(b)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		if !slices.Contains(known, f.key) {
			return nil, fmt.Errorf("unknown key %q (known: %s)", f.key, strings.Join(known, ", "))
		}
	}
	return fields, nil
}

func jsonError(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the line ends in the middle of a value"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

func kind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a bool"
	}
	return "null"
}

func isNull(b json.RawMessage) bool { return string(bytes.TrimSpace(b)) == "null" }

func str(b json.RawMessage, dst *string) error {
	if isNull(b) || json.Unmarshal(b, dst) != nil {
		return errors.New("want a string")
	}
	return nil
}

// integer reads a whole number in [lo, hi] from its digits.
func integer(b json.RawMessage, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %.40s", b)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is outside [%d, %d]", n, lo, hi)
	}
	return n, nil
}

// EmbedTexts gives a vector to every memory and query that has a text and
// no vector, embedding the texts with e in batches. It checks that e's
// vectors have the set's dim.
func (s *Set) EmbedTexts(ctx context.Context, e embed.Embedder) error {
	var texts []string
	var dsts []*[]float32
	for i := range s.Memories {
		if m := &s.Memories[i]; m.Vector == nil {
			texts, dsts = append(texts, m.Text), append(dsts, &m.Vector)
		}
	}
	for i := range s.Queries {
		if q := &s.Queries[i]; q.Vector == nil {
			texts, dsts = append(texts, q.Text), append(dsts, &q.Vector)
		}
	}
	if len(texts) == 0 {
		return nil
	}
	if e == nil {
		return fmt.Errorf("%s: %d items have a text and no vector, and there is no embedder", s.File, len(texts))
	}
	if e.Dimensions() != s.Header.Dim {
		return fmt.Errorf("%s: %d items have a text and no vector, but the embedder %s makes %d dimensions and the set's dim is %d",
			s.File, len(texts), e.Model(), e.Dimensions(), s.Header.Dim)
	}
	const batch = 256
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		vecs, err := e.Embed(ctx, texts[start:end])
		if err != nil {
			return fmt.Errorf("embedding the set's texts: %w", err)
		}
		if len(vecs) != end-start {
			return fmt.Errorf("embedding the set's texts: %d vectors for %d texts", len(vecs), end-start)
		}
		for i, v := range vecs {
			if len(v) != s.Header.Dim {
				return fmt.Errorf("embedding the set's texts: a vector of %d dimensions, want %d", len(v), s.Header.Dim)
			}
			*dsts[start+i] = v
		}
	}
	return nil
}
