package ociimage

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

func TestMergeEnv(t *testing.T) {
	tests := []struct {
		name             string
		base, over, want []string
	}{
		{"adds", []string{"PATH=/bin"}, []string{"A=1"}, []string{"PATH=/bin", "A=1"}},
		{"replaces in place", []string{"PATH=/bin", "B=2"}, []string{"PATH=/usr/bin"}, []string{"PATH=/usr/bin", "B=2"}},
		{"empty override", []string{"A=1"}, nil, []string{"A=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeEnv(tt.base, tt.over); !slices.Equal(got, tt.want) {
				t.Errorf("mergeEnv = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLayerTar: parents come first, owners and modes are kept, and the
// same entries give the same bytes (a reproducible digest).
func TestLayerTar(t *testing.T) {
	entries := []entry{
		{name: "/etc/ssl/certs/ca.crt", mode: 0o644, contents: []byte("x")},
		{name: "/tmp", mode: 0o1777, dir: true},
		{name: "/data", mode: 0o755, uid: NonrootUID, dir: true},
	}
	a, err := layerTar(entries, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := layerTar(entries, time.Unix(0, 0))
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("two builds differ (%v)", err)
	}
	files, err := Files(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		path string
		ok   bool
	}{
		{"/etc", files["/etc"].Dir},
		{"/etc/ssl/certs", files["/etc/ssl/certs"].Dir},
		{"/etc/ssl/certs/ca.crt", string(files["/etc/ssl/certs/ca.crt"].Contents) == "x"},
		{"/tmp", files["/tmp"].Mode == 0o1777},
		{"/data", files["/data"].UID == NonrootUID && files["/data"].GID == NonrootUID},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.path, files[c.path])
		}
	}
}
