package dockerfile

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFinal(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		buildArgs map[string]string
		want      Image
	}{
		{
			name: "exec forms, ports get tcp, volumes as JSON",
			text: "FROM scratch\nEXPOSE 6333 6334/udp\nVOLUME [\"/data\"]\nUSER 65532:65532\nENTRYPOINT [\"/memrank\"]\nCMD [\"serve\"]\n",
			want: Image{Base: "scratch", User: "65532:65532", Entrypoint: []string{"/memrank"}, Cmd: []string{"serve"},
				Ports: []string{"6333/tcp", "6334/udp"}, Volumes: []string{"/data"}, Labels: map[string]string{}},
		},
		{
			name: "only the last stage counts; global ARG in FROM",
			text: "ARG BASE=alpine:3\nFROM golang AS build\nUSER root\nEXPOSE 1\nFROM ${BASE} AS final\nUSER nobody\n",
			want: Image{Base: "alpine:3", User: "nobody", Labels: map[string]string{}},
		},
		{
			name: "continuations, comments inside them, quoted labels, ARG default",
			text: "FROM x\nARG VERSION=dev\nLABEL a=\"one two\" \\\n# a comment inside\n      b='$VERSION' \\\n      c=\"v${VERSION}\"\n",
			want: Image{Base: "x", Labels: map[string]string{"a": "one two", "b": "$VERSION", "c": "vdev"}},
		},
		{
			name:      "build arg wins over the default",
			text:      "FROM x\nARG VERSION=dev\nLABEL v=${VERSION}\n",
			buildArgs: map[string]string{"VERSION": "v1.2.3"},
			want:      Image{Base: "x", Labels: map[string]string{"v": "v1.2.3"}},
		},
		{
			name: "global ARG redeclared in the stage takes the global value",
			text: "ARG V=9\nFROM x\nARG V\nLABEL v=$V w=${U:-none} z=${V:+set}\n",
			want: Image{Base: "x", Labels: map[string]string{"v": "9", "w": "none", "z": "set"}},
		},
		{
			name: "ENV in both forms, later replaces earlier, ENV feeds substitution",
			text: "FROM x\nENV A=1 B=\"two words\"\nENV C three words\nENV A=${B}\nWORKDIR /$A\n",
			want: Image{Base: "x", WorkDir: "/two words", Labels: map[string]string{},
				Env: []string{"A=two words", "B=two words", "C=three words"}},
		},
		{
			name: "shell form is reported",
			text: "FROM x\nENTRYPOINT /memrank serve\n",
			want: Image{Base: "x", Labels: map[string]string{}, Entrypoint: []string{"/bin/sh", "-c", "/memrank serve"},
				ShellForm: []string{"ENTRYPOINT"}},
		},
		{
			name: "COPY kept as written, lower-case keywords",
			text: "from x as y\ncopy --from=build /out/memrank /memrank\n",
			want: Image{Base: "x", Labels: map[string]string{}, Copies: []string{"--from=build /out/memrank /memrank"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(strings.NewReader(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Final(tt.buildArgs)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Final (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"no FROM", "# nothing\n", "no FROM"},
		{"instruction before FROM", "ENV A=1\nFROM x\n", "before the first FROM"},
		{"dangling continuation", "FROM x\nRUN a \\\n", "continuation at the end"},
		{"not an instruction", "FROM x\n[\"oops\"]\n", "is not an instruction"},
		{"bad FROM", "FROM a b c d\n", "want IMAGE [AS NAME]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestFinalErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"unterminated quote", "FROM x\nLABEL a=\"b\n", "unterminated"},
		{"label without value", "FROM x\nLABEL a\n", "is not key=value"},
		{"two users", "FROM x\nUSER a b\n", "want one value"},
		{"bad substitution", "FROM x\nLABEL a=${1a}\n", "bad substitution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(strings.NewReader(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Final(nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Final: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestStage(t *testing.T) {
	f, err := Parse(strings.NewReader("FROM golang:1.26 AS build\nRUN go build\nFROM scratch\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := f.Stage("BUILD")
	if !ok || s.Name != "build" || s.Base != "golang:1.26" {
		t.Fatalf("Stage(build) = %+v, %v", s, ok)
	}
	if !slices.ContainsFunc(s.Instructions, func(in Instruction) bool { return in.Keyword == "RUN" && in.Args == "go build" }) {
		t.Errorf("build stage instructions: %+v", s.Instructions)
	}
}
