package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

// TestReadmeInFrontOfQdrant runs the README's "Running in front of Qdrant"
// command with the Qdrant it names played by `memrank qdrant-compat`
// (gRPC and REST), and uses memrank as a client would: a write through
// memrank lands in the store, and a plain collection reads back exactly as
// the store answers.
func TestReadmeInFrontOfQdrant(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Running in front of Qdrant\n\n```sh\nmemrank serve ([^\n]*)\n```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no serve command under Running in front of Qdrant")
	}
	grpcQ, httpQ := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"qdrant-compat", "--data", t.TempDir(), "--grpc", grpcQ, "--http", httpQ},
			strings.NewReader(""), io.Discard, io.Discard, nil)
	}()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", httpQ); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("qdrant-compat did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
	args := strings.Fields(strings.NewReplacer("qdrant:6334", grpcQ, "http://qdrant:6333", "http://"+httpQ).Replace(string(m[1])))
	httpAddr, _, _ := startServe(t, args...)
	base := "http://" + httpAddr
	if code, body := jsonRequest(t, "PUT", base+"/collections/docs", `{"vectors":{"size":2,"distance":"Cosine"}}`); code != 200 {
		t.Fatalf("create through memrank: %d %s", code, body)
	}
	if code, body := jsonRequest(t, "GET", "http://"+httpQ+"/collections/docs", ``); code != 200 {
		t.Errorf("the collection is not in the store: %d %s", code, body)
	}
	if code, body := jsonRequest(t, "PUT", base+"/collections/docs/points?wait=true", `{"points":[{"id":1,"vector":[1,0],"payload":{"text":"a document"}}]}`); code != 200 {
		t.Fatalf("upsert through memrank: %d %s", code, body)
	}
	// A plain collection is served as the store serves it.
	_, direct := jsonRequest(t, "POST", "http://"+httpQ+"/collections/docs/points/query", `{"query":[1,0]}`)
	code, proxied := jsonRequest(t, "POST", base+"/collections/docs/points/query", `{"query":[1,0]}`)
	cut := func(s string) string { return s[:strings.Index(s, `"time"`)] }
	if code != 200 || cut(proxied) != cut(direct) {
		t.Errorf("through memrank %d %s, the store %s", code, proxied, direct)
	}
}

// TestReadmeSetUp keeps the README's set-up block to the two commands a
// newcomer runs, the second the very test command .ci/run runs, and keeps
// the warning that the first `go run` compiles for minutes in silence
// beside the first, with how to build once.
func TestReadmeSetUp(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Set up\n.*?```sh\n(.*?)```(.*?)\n## ").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no set-up block")
	}
	var commands, comments []string
	for _, l := range strings.Split(string(m[1]), "\n") {
		switch l = strings.TrimSpace(l); {
		case l == "":
		case strings.HasPrefix(l, "#"):
			comments = append(comments, l)
		default:
			commands = append(commands, l)
		}
	}
	if len(commands) != 2 || commands[0] != "go run ./cmd/memrank serve --demo" {
		t.Fatalf("set-up commands %q, want the demo's go run and the test command", commands)
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\n"+commands[1]+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q", commands[1])
	}
	if !strings.Contains(strings.Join(comments, " "), "downloads and compiles memrank and prints nothing meanwhile") {
		t.Error("the set-up block no longer warns that the first go run is silent while it compiles")
	}
	if !strings.Contains(string(m[2]), "`go build -o memrank ./cmd/memrank`") {
		t.Error("the README no longer says how to build memrank once")
	}
}
