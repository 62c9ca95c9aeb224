package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/config/check"
)

// level is a named type that reads and writes itself as text, as a
// component's enumerations do.
type level uint8

func (l level) MarshalText() ([]byte, error) { return []byte([]string{"low", "high"}[l]), nil }

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 0
	case "high":
		*l = 1
	default:
		return fmt.Errorf("%q is not low or high", b)
	}
	return nil
}

// engine is a component's own Config: its keys are relative to wherever it
// is mounted.
type engine struct {
	Workers int           `koanf:"workers"`
	Level   level         `koanf:"level"`
	Timeout time.Duration `koanf:"timeout"`
	Limit   *float64      `koanf:"limit"`
}

func (e engine) Validate() error {
	var k check.Checker
	k.AtLeast("workers", e.Workers, 1)
	k.Timeout("timeout", e.Timeout)
	if e.Limit != nil {
		k.Unit("limit", *e.Limit)
	}
	return k.Err()
}

// app composes components, as cmd does.
type app struct {
	Name    string `koanf:"name"`
	Engine  engine `koanf:"engine"`
	Network struct {
		Front engine `koanf:"front"`
		Port  int    `koanf:"port"`
	} `koanf:"network"`
	Endpoint string `koanf:"endpoint"`
}

func defaultApp() app {
	var a app
	a.Name = "x"
	a.Engine = engine{Workers: 2, Timeout: time.Second}
	a.Network.Front = engine{Workers: 1, Timeout: time.Second}
	a.Network.Port = 80
	return a
}

func TestLoadComposedSections(t *testing.T) {
	a := defaultApp()
	file := writeFile(t, "engine: {level: high, limit: 0.5}\nnetwork: {front: {workers: 3}}\n")
	err := Load(Source{File: file, Environ: []string{"MEMRANK_ENGINE__TIMEOUT=2s", "OTHER_ENDPOINT=host:1"},
		EnvDefaults: map[string]string{"endpoint": "OTHER_ENDPOINT"}}, &a)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultApp()
	want.Engine.Level, want.Engine.Timeout, want.Engine.Limit = 1, 2*time.Second, ptr(0.5)
	want.Network.Front.Workers = 3
	want.Endpoint = "host:1"
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	out, err := YAML(a, false)
	if err != nil {
		t.Fatal(err)
	}
	back := defaultApp()
	if err := load(Source{}, "back.yaml", bytesProvider(out), &back); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if diff := cmp.Diff(a, back); diff != "" {
		t.Errorf("YAML round trip (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(string(out), "level: high") || strings.Contains(string(out), "null") {
		t.Errorf("YAML:\n%s", out)
	}
}

func TestSectionErrorsNameTheirKeys(t *testing.T) {
	a := defaultApp()
	file := writeFile(t, "engine: {workers: 0, level: middling, limit: 2}\nnetwork: {front: {timeout: 0s}}\n")
	err := Load(Source{File: file, EnvDefaults: map[string]string{"nope.key": "X"}, Environ: []string{"X=1"}}, &a)
	want := []string{
		`config: ` + file + `: engine.level: "middling" is not low or high`,
		`config: $X: unknown key "nope.key"`,
		`config: engine.workers: 0 is less than 1`,
		`config: engine.limit: 2 is outside [0, 1]`,
		`config: network.front.timeout: 0s is not positive`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWithin(t *testing.T) {
	err := Within("rank", errors.Join(&Error{Key: "oversample", Problem: "0 is less than 1"}, errors.New("plain"), &Error{Problem: "whole section"}))
	var got []string
	for _, e := range flatten(err) {
		ce := e.(*Error)
		got = append(got, ce.Key+": "+ce.Problem)
	}
	want := []string{"rank.oversample: 0 is less than 1", "rank: plain", "rank: whole section"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if Within("rank", nil) != nil {
		t.Error("Within(nil) is not nil")
	}
}

func TestLoadNeedsAPointerToAStruct(t *testing.T) {
	var n int
	if err := Load(Source{}, &n); err == nil {
		t.Error("Load into an int")
	}
	if err := Load(Source{}, app{}); err == nil {
		t.Error("Load into a value")
	}
}

func TestRefNamesKeysFromTheRoot(t *testing.T) {
	err := Within("dedup", &Error{Key: "judge_threshold", Problem: "0.95 is above " + check.Ref("same_threshold") + " (0.92)"})
	if got, want := err.Error(), "config: dedup.judge_threshold: 0.95 is above dedup.same_threshold (0.92)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	plain := &Error{Key: "a", Problem: "see " + check.Ref("b")}
	if got := plain.Error(); got != "config: a: see b" {
		t.Errorf("unmounted: %q", got)
	}
}

// writeFile writes a YAML file in a fresh temporary directory.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memrank.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func ptr[T any](v T) *T { return &v }
