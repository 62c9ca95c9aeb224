package explaintable

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/server/native"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestWrite renders a demo answer (captured with `memrank explain --demo
// --json`) and compares it with the golden table.
func TestWrite(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var resp native.RetrieveResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, &resp, "text"); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "demo.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestPayloadText(t *testing.T) {
	tests := []struct {
		name, payload, key, want string
	}{
		{"default key", `{"text":"Dana uses Neovim"}`, "text", "Dana uses Neovim"},
		{"renamed key", `{"text":"not this","content":"Dana uses Neovim"}`, "content", "Dana uses Neovim"},
		{"key absent", `{"text":"Dana uses Neovim"}`, "content", "-"},
		{"not a string", `{"text":7}`, "text", "-"},
		{"no payload", ``, "text", "-"},
		{"not an object", `[1]`, "text", "-"},
		{"spaces folded", "{\"text\":\"  Dana\\n\\tuses   Neovim \"}", "text", "Dana uses Neovim"},
		{"cut to n runes", `{"text":"éééééééééééééééééé"}`, "text", "ééééééééééééééé…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := payloadText(json.RawMessage(tt.payload), tt.key, 16); got != tt.want {
				t.Errorf("payloadText(%s, %q) = %q, want %q", tt.payload, tt.key, got, tt.want)
			}
		})
	}
}
