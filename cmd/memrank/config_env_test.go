package main

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigEnvNotConfig: the MEMRANK_ variables memrank documents as
// another program's (a client's key, the SDK tests' addresses, the test
// switches CI exports) do not stop a command that loads the configuration,
// and change nothing in it; any other MEMRANK_ variable that names no key
// is still refused by name. docs/operations.md lists every one of them.
func TestConfigEnvNotConfig(t *testing.T) {
	configPrint := func(environ ...string) (int, string, string) {
		t.Helper()
		var stdout, stderr strings.Builder
		code := run(context.Background(), []string{"config", "print"}, strings.NewReader(""), &stdout, &stderr, environ)
		return code, stdout.String(), stderr.String()
	}
	code, want, stderr := configPrint()
	if code != exitOK {
		t.Fatalf("config print with no environment: exit %d: %s", code, stderr)
	}
	for _, name := range notConfigEnv() {
		t.Run(name, func(t *testing.T) {
			code, got, stderr := configPrint(name+"=require", "HOME=/root")
			if code != exitOK || stderr != "" {
				t.Fatalf("config print with %s set: exit %d, stderr %q; want %d", name, code, stderr, exitOK)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s changed the configuration (-without +with):\n%s", name, diff)
			}
		})
	}
	for _, tt := range []struct {
		name, variable, says string
	}{
		{"an unknown variable", "MEMRANK_FOO=1", `config: $MEMRANK_FOO: unknown key "foo"`},
		{"a test switch misspelt", "MEMRANK_JS_TEST=require", `config: $MEMRANK_JS_TEST: unknown key "js_test"`},
		{"a client's setting in the wrong case", "MEMRANK_Api_Key=k", `config: $MEMRANK_Api_Key: unknown key "api_key"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := configPrint(tt.variable)
			if code != exitUsage || !strings.Contains(stderr, tt.says) || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want %d saying %q", code, stderr, stdout, exitUsage, tt.says)
			}
		})
	}
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range notConfigEnv() {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/operations.md does not list %s among the variables that are not configuration", name)
		}
	}
}

// TestNotConfigNamesNoKey: a variable the configuration ignores must not
// be the name of a real top-level key (MEMRANK_X is key x, MEMRANK_X__Y is
// x.y), or a later key of that name would be skipped without a word.
func TestNotConfigNamesNoKey(t *testing.T) {
	keys := map[string]bool{}
	ct := reflect.TypeOf(Config{})
	for i := range ct.NumField() {
		if tag := ct.Field(i).Tag.Get("koanf"); tag != "" {
			keys[tag] = true
		}
	}
	if len(keys) < 10 {
		t.Fatalf("read only %d top-level keys from Config's tags", len(keys))
	}
	for _, v := range notConfigEnv() {
		name := strings.ToLower(strings.TrimPrefix(v, "MEMRANK_"))
		top, _, _ := strings.Cut(name, "__")
		if keys[top] {
			t.Errorf("%s is ignored by the configuration but names its key %q", v, top)
		}
	}
}

// TestServeNotesAPIKeyVariable: serve used to refuse $MEMRANK_API_KEY as an
// unknown key; now that it ignores it, it says so, so that nobody takes it
// for a key the server requires.
func TestServeNotesAPIKeyVariable(t *testing.T) {
	_, _, stop := startServeEnv(t, []string{envAPIKey + "=secret"}, "--data", t.TempDir())
	_, stderr := stop()
	if !strings.Contains(stderr, "memrank: note: $MEMRANK_API_KEY is a client's key") || strings.Contains(stderr, "secret") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
