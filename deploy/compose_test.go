package deploy

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"

	"github.com/memrank/memrank/deploy/internal/ociimage"
)

// loadCompose loads compose.yaml as `docker compose` would: schema
// validation on (an unknown key fails), interpolation with an empty
// environment (so the file's defaults are what is checked), paths resolved.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	wd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := loader.LoadWithContext(ctx, types.ConfigDetails{
		WorkingDir:  wd,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(wd, "compose.yaml")}},
		Environment: types.Mapping{},
	})
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return p
}

// Pinned images: a version tag (v1.19.1, 0.158.0) or a digest, never
// latest or a moving major.
var pinnedTag = regexp.MustCompile(`^[^:@]+(:v?\d+\.\d+\.\d+[-\w.]*)?(@sha256:[0-9a-f]{64})?$`)

// noHealthcheck names the services whose images cannot run one, and why.
var noHealthcheck = map[string]string{
	"otel-collector": "no shell or HTTP client in the image",
}

func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	if got, want := slices.Sorted(slices.Values(p.ServiceNames())), []string{"memrank", "otel-collector", "prometheus", "qdrant"}; !slices.Equal(got, want) {
		t.Fatalf("services %v, want %v", got, want)
	}
	for name, s := range p.Services {
		t.Run(name, func(t *testing.T) {
			if s.Build == nil && (!pinnedTag.MatchString(s.Image) || !strings.ContainsAny(s.Image, ":@")) {
				t.Errorf("image %q is not pinned to a version or digest", s.Image)
			}
			_, exempt := noHealthcheck[name]
			switch hc := s.HealthCheck; {
			case exempt && hc != nil:
				t.Errorf("has a healthcheck, but noHealthcheck says it cannot: update the test")
			case !exempt && (hc == nil || hc.Disable || len(hc.Test) < 2):
				t.Errorf("no healthcheck")
			}
			for _, v := range s.Volumes {
				if v.Type != types.VolumeTypeBind {
					continue
				}
				if _, err := os.Stat(v.Source); err != nil {
					t.Errorf("bind mount source: %v", err)
				}
				if !v.ReadOnly {
					t.Errorf("bind mount %s is writable", v.Source)
				}
			}
		})
	}

	q, m := p.Services["qdrant"], p.Services["memrank"]
	if len(q.Ports) != 0 {
		t.Errorf("qdrant publishes %v: only memrank should reach it", q.Ports)
	}
	if !strings.HasPrefix(q.Image, "qdrant/qdrant:v1.") {
		t.Errorf("qdrant image %q", q.Image)
	}
	if dep, ok := m.DependsOn["qdrant"]; !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("memrank depends_on qdrant %+v, want service_healthy", dep)
	}
	if m.Build == nil || filepath.Join(m.Build.Context, m.Build.Dockerfile) != mustAbs(t, "Dockerfile") {
		t.Errorf("memrank build %+v, want context .. and deploy/Dockerfile", m.Build)
	}
	env := composeEnv(m)
	if got := published(m); !slices.Equal(got, []string{"6333:6333", "6334:6334"}) {
		t.Errorf("memrank publishes %v, want 6333 and 6334", got)
	}
	drain, grace := shutdownPeriods(t, func(k string) string { return env[k] })
	// Each part of memrank's shutdown gets its own grace, in turn: the
	// servers, then the final flush that writes the spool.
	if m.StopGracePeriod == nil || time.Duration(*m.StopGracePeriod) < drain+2*grace+5*time.Second {
		t.Errorf("memrank stop_grace_period %v < drain %v + 2 x grace %v + 5s", m.StopGracePeriod, drain, grace)
	}
	if !m.ReadOnly || !slices.Contains(m.CapDrop, "ALL") {
		t.Errorf("memrank: read_only %v, cap_drop %v", m.ReadOnly, m.CapDrop)
	}
	checkCollector(t, p, env["MEMRANK_TELEMETRY__OTLP_ENDPOINT"])
	checkPrometheus(t, p)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// composeEnv returns a service's environment as a map (unset values empty).
func composeEnv(s types.ServiceConfig) map[string]string {
	out := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func published(s types.ServiceConfig) []string {
	var out []string
	for _, p := range s.Ports {
		out = append(out, p.Published+":"+strconv.Itoa(int(p.Target)))
	}
	slices.Sort(out)
	return out
}

// checkCollector: memrank's OTLP endpoint is the collector's OTLP gRPC
// receiver, in plain text (http://), and the traces pipeline takes it.
func checkCollector(t *testing.T, p *types.Project, endpoint string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" {
		t.Fatalf("MEMRANK_TELEMETRY__OTLP_ENDPOINT %q: want http://otel-collector:PORT (OTLP gRPC, plain text)", endpoint)
	}
	if _, ok := p.Services[u.Hostname()]; !ok {
		t.Errorf("OTLP endpoint host %q is not a service", u.Hostname())
	}
	var cfg struct {
		Receivers struct {
			OTLP struct {
				Protocols struct {
					GRPC struct {
						Endpoint string `json:"endpoint"`
					} `json:"grpc"`
				} `json:"protocols"`
			} `json:"otlp"`
		} `json:"receivers"`
		Service struct {
			Pipelines map[string]struct {
				Receivers []string `json:"receivers"`
			} `json:"pipelines"`
		} `json:"service"`
	}
	b, err := os.ReadFile("compose/otel-collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("otel-collector.yaml: %v", err)
	}
	_, port, err := net.SplitHostPort(cfg.Receivers.OTLP.Protocols.GRPC.Endpoint)
	if err != nil || port != u.Port() {
		t.Errorf("collector's OTLP gRPC receiver %q does not listen on memrank's endpoint port %s", cfg.Receivers.OTLP.Protocols.GRPC.Endpoint, u.Port())
	}
	if !slices.Contains(cfg.Service.Pipelines["traces"].Receivers, "otlp") {
		t.Errorf("the collector's traces pipeline does not take the otlp receiver")
	}
	mounted := false
	for _, v := range p.Services[u.Hostname()].Volumes {
		mounted = mounted || v.Source == mustAbs(t, "compose/otel-collector.yaml")
	}
	if !mounted {
		t.Errorf("compose/otel-collector.yaml is not mounted into %s", u.Hostname())
	}
}

// checkPrometheus: Prometheus scrapes memrank's HTTP port at /metrics and
// loads the rules file of prometheus/ from where it is mounted.
func checkPrometheus(t *testing.T, p *types.Project) {
	t.Helper()
	var cfg struct {
		Global        map[string]string `json:"global"`
		RuleFiles     []string          `json:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `json:"job_name"`
			MetricsPath   string `json:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	b, err := os.ReadFile("compose/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	found := false
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			found = found || sc.MetricsPath == "/metrics" && slices.Contains(st.Targets, "memrank:6333")
		}
	}
	if !found {
		t.Errorf("prometheus.yml scrapes no memrank:6333/metrics: %+v", cfg.ScrapeConfigs)
	}
	targets := map[string]string{}
	for _, v := range p.Services["prometheus"].Volumes {
		targets[v.Target] = v.Source
	}
	for _, rf := range cfg.RuleFiles {
		if targets[rf] != mustAbs(t, "prometheus/memrank-rules.yaml") {
			t.Errorf("rule file %s is not prometheus/memrank-rules.yaml mounted (mounts: %v)", rf, targets)
		}
	}
}

// TestComposeServesMemrank starts the memrank service as compose.yaml
// describes it (the image's entrypoint, the service's command and
// environment on top of the image's), with the other services' addresses
// turned into loopback ones and the volumes into temporary directories,
// and probes it.
func TestComposeServesMemrank(t *testing.T) {
	p := loadCompose(t)
	m := p.Services["memrank"]
	spec, err := ociimage.ReadSpec("Dockerfile", "compose")
	if err != nil {
		t.Fatal(err)
	}
	grpcUp, restUp := qdrantCompatREST(t)
	collector := newOTLPSink(t)
	httpAddr, grpcAddr := freeAddr(t), freeAddr(t)
	r := rewrites{
		"qdrant:6334":                grpcUp,
		"http://qdrant:6333":         "http://" + restUp,
		"http://otel-collector:4317": "http://" + collector.addr,
	}
	for _, v := range m.Volumes {
		r[v.Target] = t.TempDir()
	}
	for _, tmpfs := range m.Tmpfs {
		r[tmpfs] = t.TempDir()
	}
	var env []string
	for _, kv := range spec.Env {
		env = append(env, r.apply(kv))
	}
	for k, v := range composeEnv(m) {
		env = append(env, k+"="+r.apply(v))
	}
	env = append(env, "MEMRANK_LISTEN__HTTP="+httpAddr, "MEMRANK_LISTEN__GRPC="+grpcAddr)
	noneLeft(t, "memrank's environment", env, slices.Collect(func(yield func(string) bool) {
		for name := range p.Services {
			if !yield(name + ":") {
				return
			}
		}
	})...)
	args := r.applyAll(m.Command)
	if len(m.Command) == 0 {
		args = spec.Cmd
	}
	if len(m.Entrypoint) != 0 || len(spec.Entrypoint) != 1 {
		t.Fatalf("entrypoint: service %q, image %q; want the image's binary alone", m.Entrypoint, spec.Entrypoint)
	}
	proc := start(t, memrankBinary(t), env, args...)
	probe(t, "http://"+httpAddr+"/healthz", proc)
	probe(t, "http://"+httpAddr+"/readyz", proc)
	if metrics := probe(t, "http://"+httpAddr+"/metrics", proc); !strings.Contains(metrics, "go_goroutines") {
		t.Errorf("/metrics: %.300s", metrics)
	}
	// Prometheus scrapes memrank:6333 (checkPrometheus): a name memrank
	// must allow, since it needs no key and refuses other names.
	if code, body := getByName("http://"+httpAddr+"/metrics", "memrank:6333"); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics as Prometheus asks it, by memrank:6333: %d %.300s", code, body)
	}
	if code, body := getByName("http://"+httpAddr+"/metrics", "elsewhere.example:6333"); code != 403 {
		t.Errorf("/metrics by a name not allowed: %d %.300s, want 403", code, body)
	}
	// The service's healthcheck, run as Docker would: the image's binary
	// with the container's environment.
	hc := m.HealthCheck
	if hc == nil || len(hc.Test) < 3 || hc.Test[0] != "CMD" || hc.Test[1] != spec.Entrypoint[0] {
		t.Fatalf("healthcheck %v: want [CMD %s ...]", hc, spec.Entrypoint[0])
	}
	check := exec.Command(memrankBinary(t), hc.Test[2:]...)
	check.Env = env
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("healthcheck %v: %v\n%s", hc.Test, err, out)
	}
	// A Qdrant REST call goes through memrank to the upstream.
	if code, body := get("http://" + httpAddr + "/collections"); code != 200 {
		t.Errorf("GET /collections through memrank: %d %.200s", code, body)
	}
	// docker compose stop: SIGTERM, then SIGKILL after stop_grace_period.
	checkDrain(t, proc, httpAddr, time.Duration(*m.StopGracePeriod))
	// The traces went to the collector's address, in its protocol, with
	// the configured service name (flushed at the latest on the stop).
	if n := collector.spans(composeEnv(m)["MEMRANK_TELEMETRY__SERVICE_NAME"]); n == 0 {
		t.Errorf("the OTLP receiver got no span of service %q; output:\n%s", composeEnv(m)["MEMRANK_TELEMETRY__SERVICE_NAME"], proc.out.String())
	}
}
