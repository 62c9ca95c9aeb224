package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"
)

// The users and groups distroless' static image has; memrank runs as
// nonroot.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"

	// NonrootUID is the uid (and gid) of distroless' nonroot user.
	NonrootUID = 65532
)

// caBundles are where build machines keep their CA roots, Debian's first.
var caBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine
	"/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
	"/etc/ssl/cert.pem",                  // macOS, OpenBSD
}

// CABundlePath is where the image keeps the CA roots (as distroless does),
// so that HTTPS to embedding and LLM APIs verifies.
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// findCABundle returns the first CA bundle of the build machine.
func findCABundle() (string, error) {
	for _, p := range caBundles {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("no CA bundle on this machine (looked for %s); install ca-certificates or pass one", strings.Join(caBundles, ", "))
}

// entry is one file or directory of the layer.
type entry struct {
	name     string // absolute path in the image
	mode     int64  // permission bits (and sticky)
	uid      int
	dir      bool
	contents []byte
}

// layerTar writes the entries as a tar stream with fixed times and
// owners, so the same inputs give the same layer digest.
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	for _, e := range entries {
		// Parents first: a tar without them unpacks with guessed modes.
		for _, dir := range parents(e.name) {
			if seen[dir] {
				continue
			}
			seen[dir] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return nil, fmt.Errorf("layer: %s: %w", dir, err)
			}
		}
		name := strings.TrimPrefix(e.name, "/")
		seen[name] = true
		h := &tar.Header{Name: name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.contents))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.contents); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// parents returns the directories above name, outermost first, without
// leading slash ("/etc/ssl/certs/x" -> etc, etc/ssl, etc/ssl/certs).
func parents(name string) []string {
	var out []string
	for dir := path.Dir(strings.TrimPrefix(name, "/")); dir != "." && dir != "/"; dir = path.Dir(dir) {
		out = append([]string{dir}, out...)
	}
	return out
}

// File is one regular file or directory read back from an image layer.
type File struct {
	Mode     int64
	UID, GID int
	Dir      bool
	Contents []byte
}

// Files reads a layer's uncompressed tar stream into a map by absolute
// path. Layers here are small but for the binary, so reading it whole is
// fine.
func Files(r io.Reader) (map[string]File, error) {
	out := map[string]File{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
		name := "/" + strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")
		f := File{Mode: h.Mode, UID: h.Uid, GID: h.Gid, Dir: h.Typeflag == tar.TypeDir}
		if h.Typeflag == tar.TypeReg {
			if f.Contents, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("layer: %s: %w", name, err)
			}
		}
		out[name] = f
	}
}
