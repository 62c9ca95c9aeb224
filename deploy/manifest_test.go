package deploy

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/memrank/memrank/deploy/internal/ociimage"
)

// testSecrets stand for the keys of the Secret secrets.existingSecret
// names; keys missing here are missing from the Secret.
var testSecrets = map[string]string{
	"tenancy-api-keys":       "{key-alice: alice, key-bob: bob}",
	"tenancy-admin-api-keys": "[key-admin]",
}

// pod is the memrank container of a rendered Deployment made runnable
// here: its environment resolved, its volumes temporary directories, the
// services it reaches loopback addresses.
type pod struct {
	name     string
	args     []string
	env      []string
	ports    map[string]string // container port name -> loopback address
	config   string            // the configuration file, as mounted
	rewrites rewrites
}

// TestManifestServes takes the memrank container of each rendering of the
// chart (command, args, env, mounts), starts the real binary with it
// against qdrant-compat, and probes the ports and paths the pod declares;
// then stops it as the kubelet would and checks it fits the grace period.
func TestManifestServes(t *testing.T) {
	for _, c := range chartCases[:3] {
		t.Run(c.name, func(t *testing.T) {
			r := decodeStrict(t, renderChart(t, c))
			d := one[*appsv1.Deployment](t, r, "Deployment")
			cm := one[*corev1.ConfigMap](t, r, "ConfigMap")
			ctr := memrankContainer(t, d)
			p := runnable(t, d, ctr, cm)

			// With the environment: the tenants' keys come from it, not the file.
			validate := exec.Command(memrankBinary(t), "config", "validate", p.config)
			validate.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, p.env...)
			out, err := validate.CombinedOutput()
			if err != nil {
				t.Fatalf("memrank config validate (the rendered ConfigMap): %v\n%s", err, out)
			}
			proc := start(t, memrankBinary(t), p.env, p.args...)
			httpAddr := p.ports["http"]
			for name, pr := range map[string]*corev1.Probe{"startup": ctr.StartupProbe, "liveness": ctr.LivenessProbe, "readiness": ctr.ReadinessProbe} {
				addr, ok := p.ports[pr.HTTPGet.Port.String()]
				if !ok {
					t.Fatalf("%s probe port %s is not a container port", name, pr.HTTPGet.Port.String())
				}
				probe(t, "http://"+addr+pr.HTTPGet.Path, proc)
			}
			checkGRPCHealth(t, p.ports["grpc"])
			checkHostNames(t, httpAddr, memrankConfig(t, cm))
			if !strings.Contains(proc.out.String(), "replica "+p.name) {
				t.Errorf("the replica id is not the pod's name %s; output:\n%s", p.name, proc.out.String())
			}
			if lookup(memrankConfig(t, cm), "tenancy.key") != "" {
				checkTenancy(t, httpAddr)
			}
			grace := *d.Spec.Template.Spec.TerminationGracePeriodSeconds - preStopSleep(ctr)
			checkDrain(t, proc, httpAddr, time.Duration(grace)*time.Second)
		})
	}
}

// runnable resolves the container's environment and mounts.
func runnable(t *testing.T, d *appsv1.Deployment, c corev1.Container, cm *corev1.ConfigMap) pod {
	t.Helper()
	cfg := memrankConfig(t, cm)
	grpcUp, restUp := qdrantCompatREST(t)
	p := pod{name: d.Name + "-5d8f7c9b6-q4x7z", ports: map[string]string{}, rewrites: rewrites{
		lookup(cfg, "upstream.grpc"): grpcUp,
	}}
	if rest := lookup(cfg, "upstream.rest"); rest != "" {
		p.rewrites[rest] = "http://" + restUp
	}
	if otlp := lookup(cfg, "telemetry.otlp_endpoint"); otlp != "" {
		p.rewrites[otlp] = "http://" + newOTLPSink(t).addr
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	dirs := map[string]string{}
	for _, m := range c.VolumeMounts {
		dir := t.TempDir()
		p.rewrites[m.MountPath] = dir
		dirs[m.Name] = dir
		v := volumes[m.Name]
		if v.EmptyDir == nil && v.ConfigMap == nil {
			t.Fatalf("volume %s: only emptyDir and ConfigMap volumes are run here", m.Name)
		}
	}
	// ConfigMap files after every rewrite is known (they name mount paths).
	for _, m := range c.VolumeMounts {
		if v := volumes[m.Name]; v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			for key, data := range cm.Data {
				path := filepath.Join(dirs[m.Name], key)
				if err := os.WriteFile(path, []byte(p.rewrites.apply(data)), 0o644); err != nil {
					t.Fatal(err)
				}
				if key == "memrank.yaml" {
					p.config = path
				}
			}
		}
	}
	for _, port := range c.Ports {
		p.ports[port.Name] = freeAddr(t)
	}
	p.env = append(resolveEnv(t, c.Env, p, cm),
		"MEMRANK_LISTEN__HTTP="+p.ports["http"], "MEMRANK_LISTEN__GRPC="+p.ports["grpc"])
	// The image's environment comes first, as in the container.
	spec, err := ociimage.ReadSpec("Dockerfile", "manifest")
	if err != nil {
		t.Fatal(err)
	}
	p.env = append(p.rewritesImageEnv(t, spec.Env), p.env...)
	if len(c.Command) != 0 {
		t.Fatalf("command %q: the chart should use the image's entrypoint", c.Command)
	}
	p.args = p.rewrites.applyAll(c.Args)
	for _, a := range p.args {
		if a == "--http" || a == "--grpc" {
			t.Fatalf("args %q set listen addresses: the configuration file should", c.Args)
		}
	}
	b, err := os.ReadFile(p.config)
	if err != nil {
		t.Fatal(err)
	}
	noneLeft(t, "the pod's args, env and configuration", append(append(p.args, p.env...), withoutAllowedHosts(t, b)), ".svc", "qdrant:", "/etc/memrank", "/var/lib/memrank")
	return p
}

// withoutAllowedHosts is a configuration file without listen.allowed_hosts:
// names clients reach memrank by, not addresses memrank reaches.
func withoutAllowedHosts(t *testing.T, b []byte) string {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if listen, ok := cfg["listen"].(map[string]any); ok {
		delete(listen, "allowed_hosts")
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// checkHostNames: clients reach the pod by the names the chart allowed
// (the Service's). By another name, a port that needs no key refuses them
// (DNS rebinding protection); with tenants by API key, it does not.
func checkHostNames(t *testing.T, httpAddr string, cfg map[string]any) {
	t.Helper()
	port := httpAddr[strings.LastIndex(httpAddr, ":"):]
	for _, h := range allowedHosts(cfg) {
		if code, body := getByName("http://"+httpAddr+"/healthz", h+port); code != http.StatusOK {
			t.Errorf("GET /healthz by %s, an allowed name: %d %.200s", h, code, body)
		}
	}
	want := http.StatusForbidden
	if lookup(cfg, "tenancy.key") != "" && lookup(cfg, "tenancy.header") == "" {
		want = http.StatusOK
	}
	if code, body := getByName("http://"+httpAddr+"/healthz", "elsewhere.example"+port); code != want {
		t.Errorf("GET /healthz by a name not allowed: %d %.200s, want %d", code, body, want)
	}
}

// rewritesImageEnv turns the image's volume path (/data) into a
// temporary directory; with an upstream set, memrank never opens it.
func (p pod) rewritesImageEnv(t *testing.T, env []string) []string {
	t.Helper()
	out := make([]string, 0, len(env))
	for _, kv := range env {
		out = append(out, strings.ReplaceAll(kv, "=/data", "="+t.TempDir()))
	}
	return out
}

// resolveEnv does what the kubelet does with valueFrom, for what the
// chart uses: the pod's name, secrets, the ConfigMap.
func resolveEnv(t *testing.T, vars []corev1.EnvVar, p pod, cm *corev1.ConfigMap) []string {
	t.Helper()
	var out []string
	for _, e := range vars {
		vf := e.ValueFrom
		switch {
		case vf == nil:
			out = append(out, e.Name+"="+p.rewrites.apply(e.Value))
		case vf.FieldRef != nil && vf.FieldRef.FieldPath == "metadata.name":
			out = append(out, e.Name+"="+p.name)
		case vf.SecretKeyRef != nil:
			v, ok := testSecrets[vf.SecretKeyRef.Key]
			if !ok && (vf.SecretKeyRef.Optional == nil || !*vf.SecretKeyRef.Optional) {
				t.Fatalf("env %s: secret key %s is missing and not optional: the pod would not start", e.Name, vf.SecretKeyRef.Key)
			}
			if ok {
				out = append(out, e.Name+"="+v)
			}
		case vf.ConfigMapKeyRef != nil && vf.ConfigMapKeyRef.Name == cm.Name:
			out = append(out, e.Name+"="+p.rewrites.apply(cm.Data[vf.ConfigMapKeyRef.Key]))
		default:
			t.Fatalf("env %s: valueFrom %+v is not resolved here", e.Name, vf)
		}
	}
	return out
}

// checkGRPCHealth asks the gRPC port's health service, as a gRPC
// load balancer or probe would.
func checkGRPCHealth(t *testing.T, addr string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gRPC health on %s: %v, %v", addr, resp.GetStatus(), err)
	}
}

// checkTenancy: the tenants' keys came through the Secret: no key is
// refused, the administrator's key is taken.
func checkTenancy(t *testing.T, httpAddr string) {
	t.Helper()
	if code, body := get("http://" + httpAddr + "/collections"); code != http.StatusUnauthorized {
		t.Errorf("GET /collections without a key: %d %.200s, want 401", code, body)
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+httpAddr+"/collections", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("api-key", "key-admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /collections with the administrator's key: %d, want 200", resp.StatusCode)
	}
}
