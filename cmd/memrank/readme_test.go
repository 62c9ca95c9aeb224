package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmePerUser runs the README's "Memories per user" example as it is
// written there: its configuration file, then its requests (method from
// the path, headers, body), against a real serve. If the README changes,
// this runs the new text; it cannot go stale.
func TestReadmePerUser(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- per-user example[^>]*-->(.*?)<!-- end per-user example -->").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no per-user example")
	}
	example := string(m[1])
	yaml := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(example)
	if yaml == nil {
		t.Fatal("the example has no configuration")
	}
	cfg := filepath.Join(t.TempDir(), "memrank.yaml")
	if err := os.WriteFile(cfg, []byte(yaml[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(example, "memrank serve --config memrank.yaml") {
		t.Fatal("the example does not start serve with its configuration")
	}
	httpAddr, _, _ := startServe(t, "--config", cfg, "--data", t.TempDir())

	shell := strings.ReplaceAll(example, "\\\n", " ")
	curls := regexp.MustCompile(`curl -s localhost:6333(\S+)((?: -H '[^']*')*) +-d '([^']*)'`).FindAllStringSubmatch(shell, -1)
	if len(curls) != 3 {
		t.Fatalf("found %d requests in the example, want 3", len(curls))
	}
	var answers []string
	for _, c := range curls {
		var headers []string
		for _, h := range regexp.MustCompile(`-H '([^:']+): ([^']*)'`).FindAllStringSubmatch(c[2], -1) {
			if !strings.EqualFold(h[1], "content-type") {
				headers = append(headers, h[1], h[2])
			}
		}
		code, body := jsonRequest(t, "POST", "http://"+httpAddr+c[1], c[3], headers...)
		if code != 200 {
			t.Fatalf("%s %s: HTTP %d %s", c[1], c[3], code, body)
		}
		answers = append(answers, body)
	}
	if !strings.Contains(answers[1], "Alice prefers green tea") {
		t.Errorf("Alice's retrieve does not return her memory: %s", answers[1])
	}
	if strings.Contains(answers[2], "Alice prefers green tea") {
		t.Errorf("Bob's retrieve returns Alice's memory: %s", answers[2])
	}
	if code, body := jsonRequest(t, "POST", "http://"+httpAddr+"/v1/retrieve", `{"collection":"memories","text":"tea"}`); code != 401 {
		t.Errorf("without a key: HTTP %d %s", code, body)
	}
}
