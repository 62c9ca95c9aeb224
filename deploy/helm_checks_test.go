package deploy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The checks TestHelmTemplate runs on a rendering: that the objects fit
// together and follow the rules.

// checkSelects: a selector picks the Deployment's pods.
func checkSelects(t *testing.T, what string, sel map[string]string, d *appsv1.Deployment) {
	t.Helper()
	if len(sel) == 0 {
		t.Errorf("%s selects nothing", what)
	}
	for k, v := range sel {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s selects %s=%s, which the pods lack", what, k, v)
		}
	}
}

func checkService(t *testing.T, s *corev1.Service, d *appsv1.Deployment) {
	t.Helper()
	checkSelects(t, "Service", s.Spec.Selector, d)
	c := memrankContainer(t, d)
	for _, p := range s.Spec.Ports {
		if p.AppProtocol == nil || *p.AppProtocol == "" {
			t.Errorf("Service port %s has no appProtocol", p.Name)
		}
		if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.TargetPort.String() }) {
			t.Errorf("Service port %s targets %s, not a container port", p.Name, p.TargetPort.String())
		}
	}
	if names := []string{s.Spec.Ports[0].Name, s.Spec.Ports[1].Name}; !slices.Equal(names, []string{"http", "grpc"}) {
		t.Errorf("Service ports %v, want http and grpc", names)
	}
}

func memrankContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "memrank" {
			return c
		}
	}
	t.Fatalf("no memrank container in %s", d.Name)
	return corev1.Container{}
}

// memrankConfig reads the rendered configuration file.
func memrankConfig(t *testing.T, cm *corev1.ConfigMap) map[string]any {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["memrank.yaml"]), &cfg); err != nil || cfg == nil {
		t.Fatalf("ConfigMap %s memrank.yaml: %v", cm.Name, err)
	}
	return cfg
}

// lookup returns the string at a dotted key path of a configuration, "" if
// absent.
func lookup(cfg map[string]any, path string) string {
	var cur any = cfg
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[part]
	}
	if cur == nil {
		return ""
	}
	return fmt.Sprint(cur)
}

// checkDeployment checks the pod against the rules: replica ids
// from the pod name, probes on named ports, the grace period covering
// preStop, drain and two graces, a locked-down security context, mounts that
// exist, memrank's listen ports equal to the container ports.
func checkDeployment(t *testing.T, d *appsv1.Deployment, cm *corev1.ConfigMap) {
	t.Helper()
	pod := d.Spec.Template.Spec
	c := memrankContainer(t, d)
	checkSelects(t, "Deployment", d.Spec.Selector.MatchLabels, d)
	cfg := memrankConfig(t, cm)

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s twice", e.Name)
		}
		env[e.Name] = e
	}
	if r := env["MEMRANK_REPLICA_ID"].ValueFrom; r == nil || r.FieldRef == nil || r.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("MEMRANK_REPLICA_ID %+v, want the pod's name", env["MEMRANK_REPLICA_ID"])
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for key, name := range map[string]string{"listen.http": "http", "listen.grpc": "grpc"} {
		if got, want := lookup(cfg, key), fmt.Sprintf(":%d", ports[name]); got != want {
			t.Errorf("%s is %q, container port %s is %s", key, got, name, want)
		}
	}
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || ports[p.HTTPGet.Port.String()] == 0 {
			t.Errorf("%s probe %+v: want an HTTP GET on a named container port", name, p)
		}
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("liveness %s, readiness %s; want /healthz and /readyz", c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}

	drain, grace := shutdownPeriods(t, func(k string) string {
		return lookup(cfg, strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, "MEMRANK_"), "__", ".")))
	})
	// memrank gives each part of its shutdown its own grace, in turn: the
	// servers (calls stuck on a hung Qdrant), then the final flush, whose
	// end writes the spool. Two graces must fit.
	need := int64((drain + 2*grace).Seconds()) + 5 + preStopSleep(c)
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < need {
		t.Errorf("terminationGracePeriodSeconds %v < preStop %ds + drain %v + 2 x grace %v + 5s", g, preStopSleep(c), drain, grace)
	}

	psc, sc := pod.SecurityContext, c.SecurityContext
	secChecks := []struct {
		name string
		ok   bool
	}{
		{"pod runAsNonRoot", psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot},
		{"pod runAsUser 65532", psc != nil && psc.RunAsUser != nil && *psc.RunAsUser == 65532},
		{"pod seccomp RuntimeDefault", psc != nil && psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"readOnlyRootFilesystem", sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem},
		{"allowPrivilegeEscalation false", sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation},
		{"drop ALL", sc != nil && sc.Capabilities != nil && slices.Contains(sc.Capabilities.Drop, "ALL")},
		{"no service account token", pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken},
	}
	for _, ch := range secChecks {
		if !ch.ok {
			t.Errorf("security: %s", ch.name)
		}
	}

	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	writable := map[string]bool{}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Errorf("mount %s: no volume %s", m.MountPath, m.Name)
		}
		if v.EmptyDir != nil && !m.ReadOnly {
			writable[m.MountPath] = true
		}
	}
	// What memrank writes with a read-only root: /tmp and the spool's directory.
	for _, dir := range []string{"/tmp", filepath.Dir(lookup(cfg, "access.spool_file"))} {
		if !writable[dir] {
			t.Errorf("%s is not a writable emptyDir mount", dir)
		}
	}
	if cmv := volumes["config"].ConfigMap; cmv == nil || cmv.Name != cm.Name {
		t.Errorf("config volume %+v does not mount ConfigMap %s", volumes["config"], cm.Name)
	}
}

func preStopSleep(c corev1.Container) int64 {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		return 0
	}
	return c.Lifecycle.PreStop.Sleep.Seconds
}
