// Package dockerfile reads the instructions of a Dockerfile and works out
// the configuration of its final stage's image (entrypoint, cmd, user,
// ports, volumes, environment, labels), so that an image built without a
// Docker engine can be built from, and checked against, the same file.
//
// It understands what memrank's Dockerfile uses: comments, parser
// directives (read as comments), line continuations with the default
// escape character, global and per-stage ARG, ENV and LABEL in key=value
// form (and ENV's legacy "ENV key value"), exec and shell forms of
// ENTRYPOINT and CMD, EXPOSE, VOLUME, USER, WORKDIR, FROM ... AS name, and
// $VAR / ${VAR} / ${VAR:-default} / ${VAR:+alt} substitution. It does not
// run anything and knows nothing of the base image's own configuration.
package dockerfile

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Instruction is one instruction with its continuation lines joined.
type Instruction struct {
	Keyword string // upper case: FROM, ARG, ENV...
	Args    string // everything after the keyword, trimmed
	Line    int    // where it starts (1-based)
}

// Stage is a FROM and the instructions after it.
type Stage struct {
	From         Instruction
	Base         string // the image or stage named by FROM (global ARGs substituted)
	Name         string // the AS name, or ""
	Instructions []Instruction
}

// File is a parsed Dockerfile.
type File struct {
	GlobalArgs []Instruction // ARGs before the first FROM
	Stages     []Stage
}

// Parse reads a Dockerfile.
func Parse(r io.Reader) (*File, error) {
	instructions, err := split(r)
	if err != nil {
		return nil, err
	}
	f := &File{}
	for _, in := range instructions {
		switch {
		case in.Keyword == "FROM":
			f.Stages = append(f.Stages, Stage{From: in})
		case len(f.Stages) == 0 && in.Keyword == "ARG":
			f.GlobalArgs = append(f.GlobalArgs, in)
		case len(f.Stages) == 0:
			return nil, fmt.Errorf("dockerfile: line %d: %s before the first FROM", in.Line, in.Keyword)
		default:
			s := &f.Stages[len(f.Stages)-1]
			s.Instructions = append(s.Instructions, in)
		}
	}
	if len(f.Stages) == 0 {
		return nil, fmt.Errorf("dockerfile: no FROM")
	}
	// Base and Name with the global ARGs' defaults; Final substitutes
	// build arguments again.
	globals := map[string]string{}
	for _, in := range f.GlobalArgs {
		if err := declareArg(in, globals, globals, nil); err != nil {
			return nil, fmt.Errorf("dockerfile: line %d: ARG: %w", in.Line, err)
		}
	}
	for i := range f.Stages {
		s := &f.Stages[i]
		if s.Base, s.Name, err = fromLine(s.From, globals); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// split turns the text into instructions: comments and blank lines
// dropped (also inside a continuation, as Docker does), lines ending in a
// backslash joined with the next.
func split(r io.Reader) ([]Instruction, error) {
	var (
		out   []Instruction
		cur   strings.Builder
		start int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if body, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
			cur.WriteString(body)
			continue
		}
		cur.WriteString(line)
		in, err := instruction(cur.String(), start)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dockerfile: read: %w", err)
	}
	if cur.Len() != 0 {
		return nil, fmt.Errorf("dockerfile: line %d: continuation at the end of the file", start)
	}
	return out, nil
}

func instruction(text string, line int) (Instruction, error) {
	text = strings.TrimSpace(text)
	keyword, args, _ := strings.Cut(text, " ")
	if tab := strings.IndexByte(keyword, '\t'); tab >= 0 {
		keyword, args = keyword[:tab], keyword[tab+1:]+" "+args
	}
	keyword = strings.ToUpper(keyword)
	for _, r := range keyword {
		if r < 'A' || r > 'Z' {
			return Instruction{}, fmt.Errorf("dockerfile: line %d: %q is not an instruction", line, keyword)
		}
	}
	return Instruction{Keyword: keyword, Args: strings.TrimSpace(args), Line: line}, nil
}
