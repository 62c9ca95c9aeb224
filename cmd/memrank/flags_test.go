package main

import (
	"strings"
	"testing"
)

// TestUnknownFlagSuggests: an unknown flag of any command is a usage error
// that names the flags it is likely a slip for, the inherited --config
// among them; a flag like none suggests nothing.
func TestUnknownFlagSuggests(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a letter missing", []string{"serve", "--htp", ":1"}, "memrank: unknown flag: --htp (did you mean --http?)\n"},
		{"two letters swapped", []string{"serve", "--grcp", "x"}, "memrank: unknown flag: --grcp (did you mean --grpc?)\n"},
		{"with a value after =", []string{"explain", "--colection=m"}, "memrank: unknown flag: --colection (did you mean --collection?)\n"},
		{"an inherited flag", []string{"config", "print", "--confg", "x.yaml"}, "memrank: unknown flag: --confg (did you mean --config?)\n"},
		{"a prefix", []string{"serve", "--upstream-r", "x"}, "memrank: unknown flag: --upstream-r (did you mean --upstream or --upstream-rest?)\n"},
		{"several, nearest first", []string{"explain", "--dat", "x"}, "memrank: unknown flag: --dat (did you mean --at or --data?)\n"},
		{"nothing near", []string{"serve", "--xyzzy"}, "memrank: unknown flag: --xyzzy\n"},
		{"too short to guess", []string{"serve", "--up", "x"}, "memrank: unknown flag: --up\n"},
		{"a shorthand", []string{"explain", "-z"}, "memrank: unknown shorthand flag: 'z' in -z\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != exitUsage || stderr != tt.want || stdout != "" {
				t.Errorf("memrank %s: exit %d, stderr %q, stdout %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stderr, stdout, tt.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"http", "http", 0},
		{"htp", "http", 1},
		{"grcp", "grpc", 1},
		{"colection", "collection", 1},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}
