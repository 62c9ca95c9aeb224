package deploy

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// qdrantCompatREST starts the embedded store alone with Qdrant's gRPC and
// REST APIs, as the Qdrant a deployment's upstream.grpc and upstream.rest
// point at.
func qdrantCompatREST(t testing.TB) (grpcAddr, httpAddr string) {
	t.Helper()
	grpcAddr, httpAddr = freeAddr(t), freeAddr(t)
	p := start(t, memrankBinary(t), nil, "qdrant-compat", "--data", t.TempDir(), "--grpc", grpcAddr, "--http", httpAddr)
	waitTCP(t, grpcAddr, p)
	waitTCP(t, httpAddr, p)
	return grpcAddr, httpAddr
}

// rewrites replaces strings of a deployment's command, environment and
// configuration files (service addresses, container paths) with what
// stands for them here (loopback addresses, temporary directories).
type rewrites map[string]string

// apply replaces every old string of r in s, longest first, so that
// "http://qdrant:6333" wins over "qdrant:6333".
func (r rewrites) apply(s string) string {
	olds := make([]string, 0, len(r))
	for old := range r {
		olds = append(olds, old)
	}
	slices.SortFunc(olds, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(olds))
	for _, old := range olds {
		pairs = append(pairs, old, r[old])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// applyAll rewrites each string of ss.
func (r rewrites) applyAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.apply(s)
	}
	return out
}

// noneLeft fails the test when a string of ss still names one of hosts:
// the process would reach out of the machine (or fail to resolve).
func noneLeft(t testing.TB, what string, ss []string, hosts ...string) {
	t.Helper()
	for _, s := range ss {
		for _, h := range hosts {
			if strings.Contains(s, h) {
				t.Fatalf("%s: %q still names %q after the rewrites", what, s, h)
			}
		}
	}
}

// get returns the status and body of GET url (0 and the error text when
// it does not answer).
func get(url string) (int, string) { return call(http.MethodGet, url, "", 2*time.Second) }

// getByName is get with the Host of a client that reaches memrank by the
// name host (host:port).
func getByName(url, host string) (int, string) {
	return callAs(http.MethodGet, url, host, "", 2*time.Second)
}

// post sends a JSON body and returns the status and body.
func post(url, body string) (int, string) { return call(http.MethodPost, url, body, 5*time.Second) }

func call(method, url, body string, timeout time.Duration) (int, string) {
	return callAs(method, url, "", body, timeout)
}

// callAs is call with the Host header host ("": the URL's).
func callAs(method, url, host, body string, timeout time.Duration) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Host = host
	if body != "" {
		req.Header.Set("content-type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metricNames returns the sample names of a Prometheus text exposition
// (a histogram gives name_bucket, name_sum and name_count).
func metricNames(text string) map[string]bool {
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// checkDrain sends SIGTERM and checks memrank's stop as an orchestrator
// sees it: /readyz fails at once while /healthz still answers (the drain),
// and the process is gone within budget.
func checkDrain(t *testing.T, p *process, httpAddr string, budget time.Duration) {
	t.Helper()
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ready, live := 0, 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ready, _ = get("http://" + httpAddr + "/readyz")
		live, _ = get("http://" + httpAddr + "/healthz")
		if ready == http.StatusServiceUnavailable {
			break
		}
	}
	if ready != http.StatusServiceUnavailable || live != http.StatusOK {
		t.Errorf("during the drain: /readyz %d (want 503), /healthz %d (want 200)", ready, live)
	}
	select {
	case <-p.done:
		t.Logf("stopped %v after SIGTERM (budget %v)", time.Since(began).Round(time.Millisecond), budget)
	case <-time.After(budget):
		t.Errorf("still running %v after SIGTERM: the orchestrator would kill it; output:\n%s", budget, p.out.String())
	}
}

// shutdownPeriods returns memrank's shutdown.drain and shutdown.grace as
// lookup (a key's value from the environment or a configuration file,
// "" when unset) gives them, with memrank's defaults.
func shutdownPeriods(t testing.TB, lookup func(key string) string) (drain, grace time.Duration) {
	t.Helper()
	parse := func(key string, def time.Duration) time.Duration {
		v := lookup(key)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return d
	}
	return parse("MEMRANK_SHUTDOWN__DRAIN", 3*time.Second), parse("MEMRANK_SHUTDOWN__GRACE", 10*time.Second)
}
