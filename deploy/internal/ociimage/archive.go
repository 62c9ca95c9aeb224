package ociimage

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// RefNameAnnotation names the image inside the layout's index; docker and
// podman tag the loaded image with it.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteArchive writes img as an OCI image layout in a tar file at out,
// under the reference name ref (e.g. "memrank:v1.2.3").
func WriteArchive(img v1.Image, ref, out string) error {
	dir, err := os.MkdirTemp("", "memrank-oci-")
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("image: layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: ref})); err != nil {
		return fmt.Errorf("image: layout: %w", err)
	}
	return tarDir(dir, out)
}

// tarDir writes the files under dir into a tar file, in a fixed order.
func tarDir(dir, out string) (err error) {
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("image: %w", cerr)
		}
	}()
	tw := tar.NewWriter(f)
	// WalkDir visits in lexical order, so the archive is reproducible.
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if d.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		h.Typeflag, h.Size = tar.TypeReg, st.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return fmt.Errorf("image: write %s: %w", out, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("image: write %s: %w", out, err)
	}
	return nil
}

// ReadArchive unpacks an OCI layout tar file into scratch (a directory
// the caller removes) and returns its one image and reference name.
func ReadArchive(archive, scratch string) (v1.Image, string, error) {
	if err := untar(archive, scratch); err != nil {
		return nil, "", err
	}
	idx, err := layout.ImageIndexFromPath(scratch)
	if err != nil {
		return nil, "", fmt.Errorf("image: %s: %w", archive, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, "", fmt.Errorf("image: %s: %w", archive, err)
	}
	if len(m.Manifests) != 1 {
		return nil, "", fmt.Errorf("image: %s: %d manifests in the index, want 1", archive, len(m.Manifests))
	}
	d := m.Manifests[0]
	img, err := idx.Image(d.Digest)
	if err != nil {
		return nil, "", fmt.Errorf("image: %s: %w", archive, err)
	}
	return img, d.Annotations[RefNameAnnotation], nil
}

func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("image: %s: %w", archive, err)
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if !filepath.IsLocal(name) {
			return fmt.Errorf("image: %s: entry %q leaves the directory", archive, h.Name)
		}
		target := filepath.Join(dir, name)
		if h.Typeflag == tar.TypeDir || strings.HasSuffix(h.Name, "/") {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("image: %w", err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("image: %w", err)
		}
		if err := writeFile(target, tr); err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader) error {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("image: %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("image: %s: %w", path, err)
	}
	return nil
}
