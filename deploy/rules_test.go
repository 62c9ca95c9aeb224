package deploy

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

// ruleFile is Prometheus' rule file format (the fields memrank's rules
// use or may use); unknown fields fail the strict decode.
type ruleFile struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert         string            `json:"alert,omitempty"`
	Record        string            `json:"record,omitempty"`
	Expr          string            `json:"expr"`
	For           string            `json:"for,omitempty"`
	KeepFiringFor string            `json:"keep_firing_for,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

const rulesPath = "prometheus/memrank-rules.yaml"

func loadRules(t *testing.T) ruleFile {
	t.Helper()
	b, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(b, &rf); err != nil {
		t.Fatalf("%s: %v", rulesPath, err)
	}
	if len(rf.Groups) == 0 {
		t.Fatalf("%s: no groups", rulesPath)
	}
	return rf
}

var (
	promDuration = regexp.MustCompile(`^(\d+(ms|s|m|h|d|w|y))+$`)
	alertName    = regexp.MustCompile(`^Memrank[A-Z][A-Za-z0-9]+$`)
	severities   = []string{"critical", "warning", "info"}
)

// templateFuncs stand for Prometheus' template functions, so that
// annotations are checked to parse.
var templateFuncs = template.FuncMap{
	"humanize": fmt.Sprint, "humanizePercentage": fmt.Sprint, "humanizeDuration": fmt.Sprint,
	"humanizeBytes": fmt.Sprint,
}

// TestAlertRulesFile: the rules file has the shape Prometheus loads.
func TestAlertRulesFile(t *testing.T) {
	rf := loadRules(t)
	groups, alerts := map[string]bool{}, map[string]bool{}
	for _, g := range rf.Groups {
		if g.Name == "" || groups[g.Name] || len(g.Rules) == 0 {
			t.Errorf("group %q: empty, unnamed or repeated", g.Name)
		}
		groups[g.Name] = true
		for _, r := range g.Rules {
			name := r.Alert + r.Record
			t.Run(g.Name+"/"+name, func(t *testing.T) {
				checkRule(t, r)
				if alerts[name] {
					t.Errorf("%s appears twice", name)
				}
				alerts[name] = true
			})
		}
	}
}

func checkRule(t *testing.T, r rule) {
	t.Helper()
	if (r.Alert == "") == (r.Record == "") {
		t.Fatalf("want exactly one of alert and record")
	}
	if strings.TrimSpace(r.Expr) == "" {
		t.Errorf("empty expr")
	}
	if len(metricsIn(r.Expr)) == 0 {
		t.Errorf("expr %q names no metric", r.Expr)
	}
	for _, d := range []string{r.For, r.KeepFiringFor} {
		if d != "" && !promDuration.MatchString(d) {
			t.Errorf("duration %q", d)
		}
	}
	if r.Record != "" {
		return
	}
	if !alertName.MatchString(r.Alert) {
		t.Errorf("alert name %q: want MemrankSomething", r.Alert)
	}
	if !slices.Contains(severities, r.Labels["severity"]) {
		t.Errorf("labels.severity %q, want one of %v", r.Labels["severity"], severities)
	}
	for _, key := range []string{"summary", "description"} {
		a := r.Annotations[key]
		if strings.TrimSpace(a) == "" {
			t.Errorf("annotation %s missing", key)
			continue
		}
		// Prometheus defines these before expanding an annotation.
		const prelude = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$value := .Value}}"
		if _, err := template.New(key).Funcs(templateFuncs).Parse(prelude + a); err != nil {
			t.Errorf("annotation %s: %v", key, err)
		}
	}
}

// promqlWords are PromQL's keywords and aggregation modifiers, which look
// like metric names to metricsIn.
var promqlWords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan"}

var (
	stringLit  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	braces     = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	grouping   = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identifier = regexp.MustCompile(`([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?`)
)

// metricsIn returns the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges and grouping
// lists are removed that are neither functions (followed by "(") nor
// keywords. Enough for the expressions of a rules file, not a parser.
func metricsIn(expr string) []string {
	s := stringLit.ReplaceAllString(expr, `""`)
	s = braces.ReplaceAllString(s, " ")
	s = grouping.ReplaceAllString(s, " ")
	names := map[string]bool{}
	for _, m := range identifier.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[0]:m[3]]
		glued := m[0] > 0 && strings.IndexByte("0123456789.", s[m[0]-1]) >= 0 // the m of 5m, the e of 1e6
		if glued || m[4] >= 0 || slices.Contains(promqlWords, strings.ToLower(name)) {
			continue
		}
		names[name] = true
	}
	return slices.Sorted(maps.Keys(names))
}

func TestMetricsIn(t *testing.T) {
	tests := []struct {
		name, expr string
		want       []string
	}{
		{"selector and range", `rate(a_total{x="y{z}"}[5m])`, []string{"a_total"}},
		{"ratio with grouping", `sum by (instance, le) (rate(a_bucket[5m])) / on (instance) sum(b_count) > 0.05`, []string{"a_bucket", "b_count"}},
		{"keywords", `a > 1 and b unless c offset 5m`, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metricsIn(tt.expr); !slices.Equal(got, tt.want) {
				t.Errorf("metricsIn(%q) = %v, want %v", tt.expr, got, tt.want)
			}
		})
	}
}

// notFromMemrank are names the rules use that Prometheus makes itself.
var notFromMemrank = map[string]bool{"up": true}

// onlyOnFailure are memrank metrics that appear only after a failure this
// test cannot cause without breaking the store mid-write; each is checked
// against the instrument memrank's source declares instead.
var onlyOnFailure = map[string]string{
	"memrank_audit_failures_total": `Int64Counter("memrank.audit.failures"`,
}

// TestAlertRules: every metric the rules use is one the real binary
// exposes. memrank's counters appear at their first increment and its
// histograms at their first record, so the test causes them: two memories
// written, then read one after the other with a pending bound of one
// point (the second read's increment is dropped; the first is flushed
// within the flush interval), and a burst of reads past a max_in_flight
// of one (refusals).
func TestAlertRules(t *testing.T) {
	rf := loadRules(t)
	var used []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			for _, name := range metricsIn(r.Expr) {
				if decl, ok := onlyOnFailure[name]; ok {
					checkDeclared(t, name, decl)
				} else if !notFromMemrank[name] && !slices.Contains(used, name) {
					used = append(used, name)
				}
			}
		}
	}
	upstream := qdrantCompat(t)
	httpAddr, grpcAddr := freeAddr(t), freeAddr(t)
	p := start(t, memrankBinary(t), []string{"MEMRANK_UPSTREAM__GRPC=" + upstream, "MEMRANK_LISTEN__HTTP=" + httpAddr,
		"MEMRANK_LISTEN__GRPC=" + grpcAddr, "MEMRANK_SHUTDOWN__DRAIN=0s", "MEMRANK_LIMITS__MAX_IN_FLIGHT=1",
		"MEMRANK_ACCESS__MAX_PENDING=1", "MEMRANK_ACCESS__FLUSH_INTERVAL=1s"}, "serve")
	base := "http://" + httpAddr
	probe(t, base+"/readyz", p)
	writeAndBurst(t, base)

	var missing []string
	for deadline := time.Now().Add(20 * time.Second); ; {
		exposed := metricNames(probe(t, base+"/metrics", p))
		missing = slices.DeleteFunc(slices.Clone(used), func(n string) bool { return exposed[n] })
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		// Two different points read back to back: unless a flush falls
		// between them, the second finds the pending map full.
		for _, q := range []string{"what does Alice drink", "how does Bob get to work"} {
			if code, body := post(base+"/v1/retrieve", `{"collection": "memories", "text": "`+q+`", "limit": 1}`); code != http.StatusOK {
				t.Fatalf("retrieve: %d %s", code, body)
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(missing) > 0 {
		t.Errorf("the rules use %v, which memrank does not expose (after traffic)", missing)
	}
}

// writeAndBurst writes two memories and sends bursts of reads until one
// is refused.
func writeAndBurst(t *testing.T, base string) {
	t.Helper()
	for _, text := range []string{"Alice prefers green tea", "Bob drives a red bicycle to work"} {
		if code, body := post(base+"/v1/observe", `{"collection": "memories", "text": "`+text+`", "source": "direct"}`); code != http.StatusOK {
			t.Fatalf("observe: %d %s", code, body)
		}
	}
	shed := false
	for round := 0; round < 10 && !shed; round++ {
		var (
			wg sync.WaitGroup
			mu sync.Mutex
		)
		for range 32 {
			wg.Go(func() {
				code, _ := post(base+"/v1/retrieve", `{"collection": "memories", "text": "tea", "limit": 1}`)
				mu.Lock()
				shed = shed || code == http.StatusServiceUnavailable
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	if !shed {
		t.Errorf("no request was refused at max_in_flight 1")
	}
}

// checkDeclared: the metric is declared in memrank's source (as decl) and
// documented in docs/operations.md.
func checkDeclared(t *testing.T, name, decl string) {
	t.Helper()
	found := false
	_ = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		switch {
		case found:
			return filepath.SkipAll
		case err != nil:
			return nil
		}
		if d.IsDir() && (d.Name() == "deploy" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			found = err == nil && strings.Contains(string(b), decl)
		}
		return nil
	})
	if !found {
		t.Errorf("%s: no %s in memrank's source", name, decl)
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil || !strings.Contains(string(doc), name) {
		t.Errorf("%s is not in docs/operations.md's metrics table (%v)", name, err)
	}
}
