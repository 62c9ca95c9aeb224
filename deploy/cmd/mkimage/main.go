// Command mkimage builds memrank's container image without a container
// engine and writes it as an OCI image layout tar file:
//
//	go run ./cmd/mkimage -version v1.2.3 -o memrank-oci.tar   (from deploy/)
//	docker load -i memrank-oci.tar                           (or podman load, skopeo copy oci-archive:...)
//
// The image is configured from deploy/Dockerfile's final stage; see
// package ociimage.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/memrank/memrank/deploy/internal/ociimage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run() error {
	var o ociimage.Options
	var out, ref string
	flag.StringVar(&o.RepoRoot, "root", "..", "the repository root (memrank's main module)")
	flag.StringVar(&o.Dockerfile, "dockerfile", "Dockerfile", "the Dockerfile whose final stage configures the image")
	flag.StringVar(&o.Version, "version", "dev", "version stamped into the binary and the version label")
	flag.StringVar(&o.Arch, "arch", "", "GOARCH of the image (default: this machine's)")
	flag.StringVar(&o.CABundle, "ca-bundle", "", "CA roots to put in the image (default: this machine's)")
	flag.StringVar(&out, "o", "memrank-oci.tar", "the OCI layout tar file to write")
	flag.StringVar(&ref, "ref", "", `reference name in the layout's index (default "memrank:VERSION")`)
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if ref == "" {
		ref = "memrank:" + o.Version
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	img, err := ociimage.Build(ctx, o)
	if err != nil {
		return err
	}
	if err := ociimage.WriteArchive(img, ref, out); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return fmt.Errorf("digest: %w", err)
	}
	fmt.Printf("%s: %s %s\n", out, ref, d)
	return nil
}
