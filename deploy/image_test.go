package deploy

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/memrank/memrank/deploy/internal/dockerfile"
	"github.com/memrank/memrank/deploy/internal/ociimage"
)

const imageVersion = "v0.0.0-imagetest"

// TestDockerfile: the Dockerfile says what the issue asks of the image.
// The engine-less build reads it, so these literal checks are what keeps
// a slip in the file (or in the parser) from passing unnoticed.
func TestDockerfile(t *testing.T) {
	spec, err := ociimage.ReadSpec("Dockerfile", imageVersion)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"entrypoint", spec.Entrypoint, []string{"/memrank"}},
		{"cmd", spec.Cmd, []string{"serve"}},
		{"user", spec.User, "65532:65532"},
		{"ports", spec.Ports, []string{"6333/tcp", "6334/tcp"}},
		{"volumes", spec.Volumes, []string{"/data"}},
		{"data dir env", slices.Contains(spec.Env, "MEMRANK_STORE__DATA_DIR=/data"), true},
		{"version label", spec.Labels["org.opencontainers.image.version"], imageVersion},
		{"title label", spec.Labels["org.opencontainers.image.title"], "memrank"},
		{"labels", slices.Sorted(maps.Keys(spec.Labels)), []string{
			"org.opencontainers.image.description", "org.opencontainers.image.licenses",
			"org.opencontainers.image.source", "org.opencontainers.image.title", "org.opencontainers.image.version"}},
		{"distroless nonroot base pinned by digest", strings.HasPrefix(spec.Base, "gcr.io/distroless/static-debian12:nonroot@sha256:"), true},
	}
	for _, c := range checks {
		if d := cmp.Diff(c.want, c.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}

	// The build stage builds as the engine-less build does.
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	df, err := dockerfile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	build, ok := df.Stage("build")
	if !ok || build.Base != "golang:1.26" {
		t.Fatalf("build stage: %+v, %v; want FROM golang:1.26 AS build", build.From, ok)
	}
	var run string
	for _, in := range build.Instructions {
		if in.Keyword == "RUN" && strings.Contains(in.Args, "go build") {
			run = in.Args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "` + strings.ReplaceAll(ociimage.LDFlags, "%s", "${VERSION}") + `"`, "./cmd/memrank"} {
		if !strings.Contains(run, want) {
			t.Errorf("build stage's go build %q lacks %q", run, want)
		}
	}
}

// TestImage builds the image without an engine into an OCI tarball, reads
// it back, checks its configuration against the Dockerfile and its files
// against what distroless would give, and runs the binary out of its
// layer.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	built, err := ociimage.Build(ctx, ociimage.Options{RepoRoot: "..", Dockerfile: "Dockerfile", Version: imageVersion})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "memrank-oci.tar")
	if err := ociimage.WriteArchive(built, "memrank:"+imageVersion, archive); err != nil {
		t.Fatal(err)
	}
	img, ref, err := ociimage.ReadArchive(archive, filepath.Join(dir, "layout"))
	if err != nil {
		t.Fatal(err)
	}
	if ref != "memrank:"+imageVersion {
		t.Errorf("reference name %q", ref)
	}
	spec, err := ociimage.ReadSpec("Dockerfile", imageVersion)
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, img, spec)
	files := layerFiles(t, img)
	checkFiles(t, files, spec)

	bin := filepath.Join(dir, "memrank")
	if err := os.WriteFile(bin, files["/memrank"].Contents, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), imageVersion) {
		t.Fatalf("memrank version from the image: %v: %s (want %s)", err, out, imageVersion)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	serveFromImage(t, bin, cf.Config)
}

// checkConfig compares the image's configuration with the Dockerfile's
// final stage.
func checkConfig(t *testing.T, img v1.Image, spec dockerfile.Image) {
	t.Helper()
	mt, err := img.MediaType()
	if err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %q, %v; want OCI", mt, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	checks := []struct {
		name      string
		got, want any
	}{
		{"os", cf.OS, "linux"},
		{"entrypoint", c.Entrypoint, spec.Entrypoint},
		{"cmd", c.Cmd, spec.Cmd},
		{"user", c.User, spec.User},
		{"workdir", c.WorkingDir, spec.WorkDir},
		{"exposed ports", slices.Sorted(maps.Keys(c.ExposedPorts)), slices.Sorted(slices.Values(spec.Ports))},
		{"volumes", slices.Sorted(maps.Keys(c.Volumes)), slices.Sorted(slices.Values(spec.Volumes))},
		{"labels", c.Labels, spec.Labels},
	}
	for _, ch := range checks {
		if d := cmp.Diff(ch.want, ch.got); d != "" {
			t.Errorf("image %s (-Dockerfile +image):\n%s", ch.name, d)
		}
	}
	for _, kv := range spec.Env {
		if !slices.Contains(c.Env, kv) {
			t.Errorf("image env %q lacks the Dockerfile's %s", c.Env, kv)
		}
	}
}

func layerFiles(t *testing.T, img v1.Image) map[string]ociimage.File {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files, err := ociimage.Files(rc)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkFiles: what distroless' static nonroot base gives is there, and
// every COPY of the Dockerfile's final stage has its destination (with
// the owner --chown names).
func checkFiles(t *testing.T, files map[string]ociimage.File, spec dockerfile.Image) {
	t.Helper()
	uid, _, _ := strings.Cut(spec.User, ":")
	tests := []struct {
		name string
		path string
		ok   func(ociimage.File) bool
	}{
		{"binary executable", "/memrank", func(f ociimage.File) bool { return f.Mode&0o111 != 0 && len(f.Contents) > 1<<20 }},
		{"passwd names the USER", "/etc/passwd", func(f ociimage.File) bool {
			return strings.Contains(string(f.Contents), "nonroot:x:"+uid+":"+uid+":")
		}},
		{"group", "/etc/group", func(f ociimage.File) bool { return strings.Contains(string(f.Contents), "nonroot:x:"+uid+":") }},
		{"CA roots", ociimage.CABundlePath, func(f ociimage.File) bool {
			return strings.Count(string(f.Contents), "BEGIN CERTIFICATE") > 10
		}},
		{"/tmp world-writable and sticky", "/tmp", func(f ociimage.File) bool { return f.Dir && f.Mode&0o7777 == 0o1777 }},
		{"home of nonroot", "/home/nonroot", func(f ociimage.File) bool { return f.Dir && strconv.Itoa(f.UID) == uid }},
	}
	for _, tt := range tests {
		f, ok := files[tt.path]
		if !ok || !tt.ok(f) {
			t.Errorf("%s: %s in the layer: %v (mode %o, uid %d)", tt.name, tt.path, ok, f.Mode, f.UID)
		}
	}
	for _, cp := range spec.Copies {
		fields := strings.Fields(cp)
		dest := fields[len(fields)-1]
		f, ok := files[dest]
		if !ok {
			t.Errorf("COPY %s: %s is not in the layer", cp, dest)
			continue
		}
		owner := 0
		for _, fl := range fields {
			if v, ok := strings.CutPrefix(fl, "--chown="); ok {
				u, _, _ := strings.Cut(v, ":")
				owner, _ = strconv.Atoi(u)
			}
		}
		if f.UID != owner {
			t.Errorf("COPY %s: %s belongs to %d in the layer", cp, dest, f.UID)
		}
	}
}

// serveFromImage runs the image's entrypoint and cmd with its environment
// (its volume's path turned into a temporary directory, the listeners on
// free loopback ports) in front of qdrant-compat, and probes it.
func serveFromImage(t *testing.T, bin string, c v1.Config) {
	t.Helper()
	upstream := qdrantCompat(t)
	httpAddr, grpcAddr := freeAddr(t), freeAddr(t)
	data := t.TempDir()
	var env []string
	for _, kv := range c.Env {
		if strings.HasPrefix(kv, "PATH=") {
			continue
		}
		for vol := range c.Volumes {
			kv = strings.ReplaceAll(kv, "="+vol, "="+data)
		}
		env = append(env, kv)
	}
	env = append(env, "MEMRANK_UPSTREAM__GRPC="+upstream, "MEMRANK_LISTEN__HTTP="+httpAddr,
		"MEMRANK_LISTEN__GRPC="+grpcAddr, "MEMRANK_SHUTDOWN__DRAIN=0s")
	if len(c.Entrypoint) != 1 {
		t.Fatalf("entrypoint %q: want the binary alone", c.Entrypoint)
	}
	p := start(t, bin, env, c.Cmd...)
	probe(t, "http://"+httpAddr+"/healthz", p)
	probe(t, "http://"+httpAddr+"/readyz", p)
}
