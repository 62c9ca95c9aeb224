// Package ociimage builds memrank's container image without a container
// engine: the static binary and what the distroless base would give it
// (/etc/passwd with nonroot, the CA roots, /tmp) in one layer on an empty
// base, configured from the final stage of deploy/Dockerfile, written as an
// OCI image layout in a tar file (what `docker buildx build --output
// type=oci` writes; `docker load`, `podman load` and `skopeo copy
// oci-archive:` read it).
package ociimage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/memrank/memrank/deploy/internal/dockerfile"
)

// LDFlags are the linker flags of the image's binary; deploy/Dockerfile's
// build stage uses the same (its test checks), with VERSION in place of %s.
const LDFlags = "-s -w -X main.version=%s"

// baseEnv is what distroless' static image sets in its configuration,
// which the Dockerfile's ENV adds to.
var baseEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"SSL_CERT_FILE=" + CABundlePath,
}

// Options say what to build.
type Options struct {
	RepoRoot   string // the main module (the repository root)
	Dockerfile string // deploy/Dockerfile, whose final stage configures the image
	Version    string // stamped into the binary and the version label (default "dev")
	Arch       string // GOARCH of the image (default: this machine's)
	Binary     string // a memrank binary already built as the Dockerfile builds it; empty: go build
	CABundle   string // the CA roots to copy (default: the build machine's)
	// Created is the image's creation time and every file's mtime (default:
	// $SOURCE_DATE_EPOCH, else the Unix epoch), so builds are reproducible.
	Created time.Time
}

// Build builds the image.
func Build(ctx context.Context, o Options) (v1.Image, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	spec, err := ReadSpec(o.Dockerfile, o.Version)
	if err != nil {
		return nil, err
	}
	bin := o.Binary
	if bin == "" {
		dir, err := os.MkdirTemp("", "memrank-image-")
		if err != nil {
			return nil, fmt.Errorf("image: %w", err)
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "memrank")
		if err := goBuild(ctx, o.RepoRoot, bin, o.Version, o.Arch); err != nil {
			return nil, err
		}
	}
	entries, err := o.entries(bin)
	if err != nil {
		return nil, err
	}
	raw, err := layerTar(entries, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer, History: v1.History{
		Created:   v1.Time{Time: o.Created},
		CreatedBy: "deploy/internal/ociimage: /memrank, /etc/passwd, /etc/group, CA roots, /tmp, /home/nonroot, /data",
		Comment:   "built without an engine from " + filepath.Base(o.Dockerfile),
	}})
	if err != nil {
		return nil, fmt.Errorf("image: append layer: %w", err)
	}
	return configure(img, spec, o)
}

func (o *Options) defaults() error {
	if o.RepoRoot == "" || o.Dockerfile == "" {
		return fmt.Errorf("image: RepoRoot and Dockerfile are required")
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
	}
	if o.CABundle == "" {
		p, err := findCABundle()
		if err != nil {
			return fmt.Errorf("image: %w", err)
		}
		o.CABundle = p
	}
	if o.Created.IsZero() {
		o.Created = time.Unix(0, 0).UTC()
		if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
			sec, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("image: SOURCE_DATE_EPOCH %q: %w", s, err)
			}
			o.Created = time.Unix(sec, 0).UTC()
		}
	}
	return nil
}

// entries are the layer's files: the binary where the Dockerfile copies
// it, and what distroless' static base would give.
func (o *Options) entries(bin string) ([]entry, error) {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("image: binary: %w", err)
	}
	ca, err := os.ReadFile(o.CABundle)
	if err != nil {
		return nil, fmt.Errorf("image: CA roots: %w", err)
	}
	return []entry{
		{name: "/etc/passwd", mode: 0o644, contents: []byte(passwd)},
		{name: "/etc/group", mode: 0o644, contents: []byte(group)},
		{name: CABundlePath, mode: 0o644, contents: ca},
		{name: "/tmp", mode: 0o1777, dir: true},
		{name: "/home/nonroot", mode: 0o700, uid: NonrootUID, dir: true},
		{name: "/data", mode: 0o755, uid: NonrootUID, dir: true},
		{name: "/memrank", mode: 0o755, contents: binary},
	}, nil
}

// configure sets the image configuration from the Dockerfile's final
// stage.
func configure(img v1.Image, spec dockerfile.Image, o Options) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: o.Created}
	c := &cf.Config
	c.Entrypoint, c.Cmd, c.User, c.WorkingDir = spec.Entrypoint, spec.Cmd, spec.User, spec.WorkDir
	c.Env = mergeEnv(baseEnv, spec.Env)
	c.Labels = spec.Labels
	c.ExposedPorts = map[string]struct{}{}
	for _, p := range spec.Ports {
		c.ExposedPorts[p] = struct{}{}
	}
	c.Volumes = map[string]struct{}{}
	for _, v := range spec.Volumes {
		c.Volumes[v] = struct{}{}
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	return img, nil
}

// mergeEnv adds over to base, a name in over replacing the same name.
func mergeEnv(base, over []string) []string {
	out := append([]string(nil), base...)
	for _, kv := range over {
		name, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, b := range out {
			if n, _, _ := strings.Cut(b, "="); n == name {
				out[i], replaced = kv, true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}

// ReadSpec parses the Dockerfile and works out its final stage with
// VERSION as the build argument.
func ReadSpec(path, version string) (dockerfile.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return dockerfile.Image{}, fmt.Errorf("image: %w", err)
	}
	defer f.Close()
	df, err := dockerfile.Parse(f)
	if err != nil {
		return dockerfile.Image{}, fmt.Errorf("image: %s: %w", path, err)
	}
	spec, err := df.Final(map[string]string{"VERSION": version})
	if err != nil {
		return dockerfile.Image{}, fmt.Errorf("image: %s: %w", path, err)
	}
	if len(spec.ShellForm) > 0 {
		return dockerfile.Image{}, fmt.Errorf("image: %s: %v in shell form: the base has no shell", path, spec.ShellForm)
	}
	return spec, nil
}

// goBuild builds ./cmd/memrank as the Dockerfile's build stage does.
func goBuild(ctx context.Context, root, out, version, arch string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", fmt.Sprintf(LDFlags, version), "-o", out, "./cmd/memrank")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("image: go build: %w\n%s", err, b)
	}
	return nil
}
