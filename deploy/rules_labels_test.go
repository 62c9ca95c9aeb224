package deploy

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var (
	// selector is a metric name with its label matchers, in a rule.
	selector = regexp.MustCompile(`([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\}`)
	// labelPair is one label matcher (in a rule) or label (in a scrape).
	labelPair = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
)

// series is one scraped series: its metric name and labels.
type series struct {
	name   string
	labels map[string]string
}

func parseSeries(text string) []series {
	var out []series
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := selector.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(line, m[1]+"{") {
			continue
		}
		s := series{name: m[1], labels: map[string]string{}}
		for _, l := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[l[1]] = l[3]
		}
		out = append(out, s)
	}
	return out
}

// targetLabels are the labels Prometheus attaches to a scrape target's
// series itself: memrank's /metrics never has them.
var targetLabels = map[string]bool{"job": true, "instance": true}

// matchedOnlyOnFailure are label matchers of the rules that no series of a
// test run can meet without breaking the store mid-write: a failed
// access-count write.
var matchedOnlyOnFailure = map[string]bool{
	`memrank_access_flush_writes_total result="failed"`: true,
}

// TestAlertRuleLabels: every label matcher the rules use (label="v",
// label=~"re") meets a series of the real binary: a healthy memrank after
// traffic, and one whose Qdrant is down (the failures the rules are about).
// A matcher on a label memrank does not set, or a value written in another
// form ("Unavailable" for otelgrpc's "UNAVAILABLE"), would never fire.
func TestAlertRuleLabels(t *testing.T) {
	healthyAddr, downAddr := freeAddr(t), freeAddr(t)
	healthy := start(t, memrankBinary(t), []string{"MEMRANK_UPSTREAM__GRPC=" + qdrantCompat(t), "MEMRANK_LISTEN__HTTP=" + healthyAddr,
		"MEMRANK_LISTEN__GRPC=" + freeAddr(t), "MEMRANK_SHUTDOWN__DRAIN=0s", "MEMRANK_LIMITS__MAX_IN_FLIGHT=1",
		"MEMRANK_ACCESS__MAX_PENDING=1", "MEMRANK_ACCESS__FLUSH_INTERVAL=1s"}, "serve")
	down := start(t, memrankBinary(t), []string{"MEMRANK_UPSTREAM__GRPC=" + freeAddr(t), "MEMRANK_LISTEN__HTTP=" + downAddr,
		"MEMRANK_LISTEN__GRPC=" + freeAddr(t), "MEMRANK_SHUTDOWN__DRAIN=0s"}, "serve")
	probe(t, "http://"+healthyAddr+"/readyz", healthy)
	writeAndBurst(t, "http://"+healthyAddr)
	probe(t, "http://"+downAddr+"/healthz", down)
	for _, path := range []string{"/collections", "/readyz"} {
		if code, _ := get("http://" + downAddr + path); code == http.StatusOK {
			t.Fatalf("GET %s with Qdrant down: 200", path)
		}
	}
	all := append(parseSeries(probe(t, "http://"+healthyAddr+"/metrics", healthy)),
		parseSeries(probe(t, "http://"+downAddr+"/metrics", down))...)

	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			for _, sel := range selector.FindAllStringSubmatch(r.Expr, -1) {
				for _, m := range labelPair.FindAllStringSubmatch(sel[2], -1) {
					name, label, op, value := sel[1], m[1], m[2], m[3]
					key := name + " " + label + op + `"` + value + `"`
					if op != "=" && op != "=~" || targetLabels[label] || matchedOnlyOnFailure[key] {
						continue
					}
					re := regexp.MustCompile("^(?:" + value + ")$")
					if op == "=" {
						re = regexp.MustCompile("^" + regexp.QuoteMeta(value) + "$")
					}
					if !meets(all, name, label, re) {
						t.Errorf("%s: %s meets no series of memrank (healthy or with Qdrant down)", r.Alert, key)
					}
				}
			}
		}
	}
}

func meets(all []series, name, label string, re *regexp.Regexp) bool {
	for _, s := range all {
		if v, ok := s.labels[label]; ok && s.name == name && re.MatchString(v) {
			return true
		}
	}
	return false
}
