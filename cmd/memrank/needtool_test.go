package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTool returns the path of bin, found on PATH, when it and files
// (absolute, or from this package's directory) are all there. Otherwise it
// skips the test, saying what is missing and how to get it and run the
// test (how); when env (MEMRANK_JS_TESTS, ...) is "require", as CI sets
// it, it fails instead: there a skip would hide that the test never ran.
func needTool(t *testing.T, env, bin, how string, files ...string) string {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		skipOrFail(t, env, bin+" is not on PATH: "+how)
		return ""
	}
	for _, f := range files {
		if !exists(f) {
			skipOrFail(t, env, strings.TrimPrefix(filepath.ToSlash(f), "../../")+" is missing: "+how)
			return ""
		}
	}
	return path
}

// skipOrFail skips the test for why, or fails it when env says the test
// must run.
func skipOrFail(t *testing.T, env, why string) {
	t.Helper()
	if os.Getenv(env) == "require" {
		t.Fatalf("%s (%s=require: this test must run)", why, env)
	}
	t.Skip(why)
}

// absDir is dir, given from this package's directory, made absolute.
func absDir(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestNeedTool: a tool that is there is returned; a missing tool or file
// skips (the env variable unset), saying what is missing.
func TestNeedTool(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const env = "MEMRANK_NEEDTOOL_TEST" // never "require"
	t.Setenv(env, "")
	tests := []struct {
		name    string
		bin     string
		files   []string
		skipped bool
	}{
		{"there", self, []string{"needtool_test.go"}, false},
		{"no such tool", "memrank-no-such-tool", nil, true},
		{"no such file", self, []string{"../../no/such/file"}, true},
	}
	for _, tt := range tests {
		var sub *testing.T
		var got string
		t.Run(tt.name, func(t *testing.T) {
			sub = t
			got = needTool(t, env, tt.bin, "how to get it", tt.files...)
		})
		if sub.Skipped() != tt.skipped {
			t.Errorf("%s: skipped = %v, want %v", tt.name, sub.Skipped(), tt.skipped)
		}
		if want := map[bool]string{false: self}[tt.skipped]; got != want {
			t.Errorf("%s: returned %q, want %q", tt.name, got, want)
		}
	}
}
