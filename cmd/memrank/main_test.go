package main

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"memrank": main})
}

// TestScripts runs the CLI end to end: testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", repo)
			// A developer's own settings must not leak into the scripts.
			for _, k := range []string{"MEMRANK_CONFIG", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
				e.Setenv(k, "")
			}
			return nil
		},
	})
}
