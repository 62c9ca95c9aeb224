package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/client"
)

// printer stands in for package fmt inside readmeGoExample, so that the
// README's fmt.Println prints where the test can read it.
type printer struct{ out *bytes.Buffer }

func (p printer) Println(a ...any) {
	var parts []string
	for _, v := range a {
		b, _ := json.Marshal(v)
		s := string(b)
		if str, ok := v.(string); ok {
			s = str
		}
		parts = append(parts, s)
	}
	p.out.WriteString(strings.Join(parts, " ") + "\n")
}

// readmeGoExample is the README's Go example, line for line but for the
// address and the collection (TestReadmeSDKs checks that).
func readmeGoExample(ctx context.Context, baseURL, coll string, w *bytes.Buffer) {
	fmt := printer{w}
	// README example:
	mr, _ := client.New(baseURL)
	out, _ := mr.Observe(ctx, client.Observation{Collection: coll, Text: "Dana uses Neovim", Source: "direct", SessionID: "s1"})
	res, _ := mr.Retrieve(ctx, client.RetrieveRequest{Collection: coll, Text: "what editor does Dana use"})
	hist, _ := mr.History(ctx, coll, out.MemoryID)
	fmt.Println(out.Decision, res.Results[0].Text(), len(hist.Audit))
	// end README example
}

// TestReadmeSDKs runs the README's three SDK examples as they are written
// against a real serve, each on its own collection: the Go one is
// readmeGoExample (checked line for line against the README), the
// TypeScript and Python ones run in node and python3 with only the
// address, the package path and the collection replaced.
func TestReadmeSDKs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- sdk examples -->(.*?)<!-- end sdk examples -->").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no SDK examples between their markers")
	}
	blocks := map[string]string{}
	for _, b := range regexp.MustCompile("(?s)```(go|js|python)\n(.*?)```").FindAllStringSubmatch(string(m[1]), -1) {
		blocks[b[1]] = b[2]
		if n := strings.Count(strings.TrimSpace(b[2]), "\n") + 1; n != 5 {
			t.Errorf("the README's %s example is %d lines, not five", b[1], n)
		}
	}
	httpAddr, _, _ := startServe(t, "--data", t.TempDir())
	url := "http://" + httpAddr
	const readmeURL, readmeColl = `"http://127.0.0.1:6333"`, `"notes"`

	t.Run("go", func(t *testing.T) {
		_, self, _, _ := runtime.Caller(0)
		src, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		body := regexp.MustCompile(`(?s)// README example:\n(.*?)\t// end README example`).FindSubmatch(src)
		want := strings.NewReplacer(readmeURL, "baseURL", readmeColl, "coll").Replace(blocks["go"])
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(body[1])), "\n") {
			got = append(got, strings.TrimSpace(l))
		}
		if strings.TrimSpace(want) != strings.Join(got, "\n") {
			t.Fatalf("readmeGoExample is not the README's Go example:\n%s\nREADME (renamed):\n%s", strings.Join(got, "\n"), want)
		}
		var out bytes.Buffer
		readmeGoExample(context.Background(), url, "notes_go", &out)
		if out.String() != "inserted Dana uses Neovim 1\n" {
			t.Errorf("printed %q", out.String())
		}
	})

	t.Run("typescript", func(t *testing.T) {
		node := needTool(t, "MEMRANK_JS_TESTS", "node", "install Node 20+, then `go test -run TestReadmeSDKs ./cmd/memrank/`")
		npm := needTool(t, "MEMRANK_JS_TESTS", "npm", "install Node 20+ with npm, then `go test -run TestReadmeSDKs ./cmd/memrank/`")
		if !strings.Contains(string(readme), "npm install /path/to/memrank/sdk/js") {
			t.Fatal("the README no longer says how to install the TypeScript SDK")
		}
		sdk, err := filepath.Abs(sdkJSDir)
		if err != nil {
			t.Fatal(err)
		}
		// The README's install, in a project of its own: the example then
		// imports "@memrank/client" as written.
		project := t.TempDir()
		if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name": "readme-example", "private": true, "type": "module"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--offline", sdk)
		install.Dir = project
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("npm install %s: %v\n%s", sdk, err, out)
		}
		script := strings.NewReplacer(readmeURL, `"`+url+`"`, readmeColl, `"notes_js"`).Replace(blocks["js"])
		if got := runExampleIn(t, node, project, "example.mjs", script, nil); got != "Dana uses Neovim 1\n" {
			t.Errorf("printed %q", got)
		}
	})

	t.Run("python", func(t *testing.T) {
		py := python3(t)
		sdk, err := filepath.Abs(filepath.Join("..", "..", "sdk", "python"))
		if err != nil {
			t.Fatal(err)
		}
		script := strings.NewReplacer(readmeURL, `"`+url+`"`, readmeColl, `"notes_py"`).Replace(blocks["python"])
		got := runExample(t, py, "example.py", script, []string{"PYTHONPATH=" + sdk})
		if !regexp.MustCompile(`^inserted Dana uses Neovim 0\.\d+\n$`).MatchString(got) {
			t.Errorf("printed %q", got)
		}
	})
}

// runExample writes script to a file named name and runs it with bin,
// returning its stdout; a failure shows its stderr.
func runExample(t *testing.T, bin, name, script string, env []string) string {
	t.Helper()
	return runExampleIn(t, bin, t.TempDir(), name, script, env)
}

// runExampleIn is runExample with the script written into dir.
func runExampleIn(t *testing.T, bin, dir, name, script string, env []string) string {
	t.Helper()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, file)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s\nscript:\n%s", bin, name, err, stderr.String(), script)
	}
	return stdout.String()
}
