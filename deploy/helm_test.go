package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const (
	chartDir = "helm/memrank"
	// The Kubernetes the chart is rendered for: the client libraries'
	// (k8s.io/api v0.37). helm built by `go run` defaults to 1.20, below
	// the chart's kubeVersion (the preStop sleep needs 1.30).
	kubeVersion = "v1.37.0"
	namespace   = "memrank"
)

// chartCase is one way of installing the chart.
type chartCase struct {
	name, release string
	valuesFiles   []string
	values        string // YAML, over the files
	kinds         []string
}

var chartCases = []chartCase{
	{name: "default", release: "memrank",
		kinds: []string{"ConfigMap", "Deployment", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "tenancy example", release: "memrank", valuesFiles: []string{"helm/examples/tenancy-values.yaml"},
		kinds: []string{"ConfigMap", "Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount", "ServiceMonitor"}},
	{name: "sidecar example", release: "agent", valuesFiles: []string{"helm/examples/sidecar-values.yaml"},
		kinds: []string{"ConfigMap", "Deployment", "ServiceAccount"}},
	{name: "every option", release: "full", values: `
image: {digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
secrets: {existingSecret: memrank-keys}
tenancy: {key: user_id, jwt: {claim: sub, issuer: https://issuer.example, audience: memrank, publicKeysSecretName: jwt-keys}}
tls: {listen: {secretName: memrank-tls}, upstream: {enabled: true, caSecretName: qdrant-ca, serverName: qdrant}}
upstream: {grpc: "qdrant:6334", rest: "https://qdrant:6333"}
terminationGracePeriodSeconds: 60
autoscaling: {enabled: true}
serviceMonitor: {enabled: true}
networkPolicy: {enabled: true}
serviceAccount: {create: false, name: shared}
extraEnv: [{name: GOMEMLIMIT, value: 400MiB}]
allowedHosts: [memrank.example.com]
priorityClassName: high
imagePullSecrets: [{name: regcred}]
`, kinds: []string{"ConfigMap", "Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceMonitor"}},
}

// chartValues reads a case's values files and inline values, merged as
// helm -f does (later files win, maps merged).
func chartValues(t *testing.T, c chartCase) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, f := range c.valuesFiles {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			t.Fatal(err)
		}
		vals = chartutil.MergeTables(v.AsMap(), vals)
	}
	if c.values != "" {
		v, err := chartutil.ReadValues([]byte(c.values))
		if err != nil {
			t.Fatal(err)
		}
		vals = chartutil.MergeTables(v.AsMap(), vals)
	}
	return vals
}

// renderChart renders the chart as `helm template` does, with missing
// values an error, and returns its documents (NOTES.txt left out).
func renderChart(t *testing.T, c chartCase) []string {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	rv, err := chartutil.ToRenderValues(ch, chartValues(t, c), chartutil.ReleaseOptions{Name: c.release, Namespace: namespace, IsInstall: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Engine{Strict: true}.Render(ch, rv)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var docs []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		for doc := range strings.SplitSeq(files[name], "\n---") {
			if strings.TrimSpace(stripComments(doc)) != "" {
				docs = append(docs, doc)
			}
		}
	}
	return docs
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// strictCodecs decode Kubernetes' built-in kinds; unknown and duplicate
// fields are errors.
var strictCodecs = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)

// serviceMonitor is the part of the Prometheus Operator's CRD the chart
// writes; anything else fails the strict decode.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
			Scheme        string `json:"scheme,omitempty"`
			TLSConfig     *struct {
				InsecureSkipVerify bool `json:"insecureSkipVerify"`
			} `json:"tlsConfig,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// rendered is a rendering decoded: the objects by kind (a name each).
type rendered struct {
	objects map[string][]runtime.Object
	monitor *serviceMonitor
}

func (r rendered) kinds() []string {
	ks := slices.Collect(maps.Keys(r.objects))
	if r.monitor != nil {
		ks = append(ks, "ServiceMonitor")
	}
	slices.Sort(ks)
	return ks
}

func one[T runtime.Object](t *testing.T, r rendered, kind string) T {
	t.Helper()
	objs := r.objects[kind]
	if len(objs) != 1 {
		t.Fatalf("%d %s objects, want 1", len(objs), kind)
	}
	o, ok := objs[0].(T)
	if !ok {
		t.Fatalf("%s decoded as %T", kind, objs[0])
	}
	return o
}

// decodeStrict decodes every document into its k8s.io/api type (or the
// ServiceMonitor struct).
func decodeStrict(t *testing.T, docs []string) rendered {
	t.Helper()
	r := rendered{objects: map[string][]runtime.Object{}}
	dec := strictCodecs.UniversalDeserializer()
	for _, doc := range docs {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		if head.APIVersion == "monitoring.coreos.com/v1" && head.Kind == "ServiceMonitor" {
			var sm serviceMonitor
			if err := yaml.UnmarshalStrict([]byte(doc), &sm); err != nil {
				t.Fatalf("ServiceMonitor: %v\n%s", err, doc)
			}
			r.monitor = &sm
			continue
		}
		obj, gvk, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("strict decode: %v\n%s", err, doc)
		}
		r.objects[gvk.Kind] = append(r.objects[gvk.Kind], obj)
	}
	return r
}

// TestHelmLint runs helm's linters (those of `helm lint`) with each
// case's values; a warning fails.
func TestHelmLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			l := lint.AllWithKubeVersion(chartDir, chartValues(t, c), namespace, kv)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				} else {
					t.Logf("helm lint: %s", m)
				}
			}
		})
	}
}

// TestHelmTemplate renders each case, decodes every object strictly, and
// checks what the deployment depends on.
func TestHelmTemplate(t *testing.T) {
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			r := decodeStrict(t, renderChart(t, c))
			if got := r.kinds(); !slices.Equal(got, c.kinds) {
				t.Fatalf("kinds %v, want %v", got, c.kinds)
			}
			d := one[*appsv1.Deployment](t, r, "Deployment")
			checkDeployment(t, d, one[*corev1.ConfigMap](t, r, "ConfigMap"))
			if objs := r.objects["Service"]; len(objs) == 1 {
				checkService(t, objs[0].(*corev1.Service), d)
			}
			if objs := r.objects["PodDisruptionBudget"]; len(objs) == 1 {
				pdb := objs[0].(*policyv1.PodDisruptionBudget)
				checkSelects(t, "PodDisruptionBudget", pdb.Spec.Selector.MatchLabels, d)
			}
			if objs := r.objects["HorizontalPodAutoscaler"]; len(objs) == 1 {
				hpa := objs[0].(*autoscalingv2.HorizontalPodAutoscaler)
				if ref := hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != d.Name || d.Spec.Replicas != nil {
					t.Errorf("HPA targets %+v; Deployment %s has replicas %v (want none under an HPA)", ref, d.Name, d.Spec.Replicas)
				}
			}
			if objs := r.objects["NetworkPolicy"]; len(objs) == 1 {
				np := objs[0].(*networkingv1.NetworkPolicy)
				checkSelects(t, "NetworkPolicy", np.Spec.PodSelector.MatchLabels, d)
			}
			if sm := r.monitor; sm != nil {
				checkSelects(t, "ServiceMonitor", sm.Spec.Selector.MatchLabels, d)
				if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "http" || sm.Spec.Endpoints[0].Path != "/metrics" {
					t.Errorf("ServiceMonitor endpoints %+v, want port http path /metrics", sm.Spec.Endpoints)
				}
			}
		})
	}
}

// TestHelmAllowedHosts: memrank allows the names in-cluster clients reach
// it by (the Service's), plus allowedHosts; "*" stands alone.
func TestHelmAllowedHosts(t *testing.T) {
	svc := func(name string) []string {
		return []string{name, name + "." + namespace, name + "." + namespace + ".svc", name + "." + namespace + ".svc.cluster.local"}
	}
	tests := []struct {
		name, values string
		want         []string
	}{
		{"the Service's names", "", svc("memrank")},
		{"and more", "allowedHosts: [memrank.example.com, .corp.example]", append(svc("memrank"), "memrank.example.com", ".corp.example")},
		{"a renamed Service", "fullnameOverride: mr", svc("mr")},
		{"every name", "allowedHosts: [\"*\"]", []string{"*"}},
		{"no Service", "service: {enabled: false}", nil},
		{"no Service, a name", "service: {enabled: false}\nallowedHosts: [agent.internal]", []string{"agent.internal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decodeStrict(t, renderChart(t, chartCase{release: "memrank", values: tt.values}))
			if diff := cmp.Diff(tt.want, allowedHosts(memrankConfig(t, one[*corev1.ConfigMap](t, r, "ConfigMap")))); diff != "" {
				t.Errorf("listen.allowed_hosts (-want +got):\n%s", diff)
			}
		})
	}
}

// allowedHosts is a configuration's listen.allowed_hosts.
func allowedHosts(cfg map[string]any) []string {
	listen, _ := cfg["listen"].(map[string]any)
	list, _ := listen["allowed_hosts"].([]any)
	var out []string
	for _, h := range list {
		out = append(out, fmt.Sprint(h))
	}
	return out
}

// TestHelmRejects: values that would break the shutdown or the upstream
// fail the render instead of deploying.
func TestHelmRejects(t *testing.T) {
	tests := []struct {
		name, values, want string
	}{
		{"grace period too short", "terminationGracePeriodSeconds: 20", "shorter than"},
		{"no upstream", "upstream: {grpc: \"\"}", "upstream.grpc"},
		{"tenancy without a key", "tenancy: {jwt: {claim: sub}}", "tenancy.key is empty"},
		{"plain REST with upstream TLS", "tls: {upstream: {enabled: true}}\nupstream: {rest: \"http://qdrant:6333\"}", "plain http"},
		{"listen in config", "config: {listen: {http: \":8080\"}}", "config.listen"},
		{"shutdown in config", "config: {shutdown: {grace: 30s}}", "config.shutdown"},
		{"a secret in config", "config: {upstream: {api_key: k}}", "config.upstream.api_key"},
		{"the spool in config", "config: {access: {spool_file: /x}}", "config.access.spool_file"},
	}
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := chartValues(t, chartCase{values: tt.values})
			kv, _ := chartutil.ParseKubeVersion(kubeVersion)
			caps := chartutil.DefaultCapabilities.Copy()
			caps.KubeVersion = *kv
			rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "x", Namespace: namespace, IsInstall: true}, caps)
			if err != nil {
				t.Fatal(err)
			}
			_, err = engine.Engine{Strict: true}.Render(ch, rv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestStrictDecodeCatches: the strict decoding the chart's tests rely on
// does refuse what it should.
func TestStrictDecodeCatches(t *testing.T) {
	tests := []struct {
		name, doc string
	}{
		{"unknown field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {portz: []}\n"},
		{"duplicate field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {type: ClusterIP, type: NodePort}\n"},
		{"unknown field in a container", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {spec: {containers: [{name: a, imagePullPolicyy: Always}]}}}\n"},
		{"ServiceMonitor unknown field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\nspec: {endpoints: [{port: http, pathh: /metrics}]}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if strings.Contains(tt.doc, "ServiceMonitor") {
				err = yaml.UnmarshalStrict([]byte(tt.doc), &serviceMonitor{})
			} else {
				_, _, err = strictCodecs.UniversalDeserializer().Decode([]byte(tt.doc), nil, nil)
			}
			if err == nil {
				t.Errorf("decoded without error:\n%s", tt.doc)
			}
		})
	}
}
