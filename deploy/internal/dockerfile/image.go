package dockerfile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Image is the configuration the final stage's instructions give its
// image, on top of whatever the base image sets (which this package cannot
// see).
type Image struct {
	Base       string
	User       string
	WorkDir    string
	Entrypoint []string
	Cmd        []string
	Ports      []string // "6333/tcp", in order of appearance, each once
	Volumes    []string // in order of appearance, each once
	Env        []string // "KEY=value", in order of first setting; a later ENV replaces the value
	Labels     map[string]string
	// ShellForm names the instructions (ENTRYPOINT, CMD) written in shell
	// form: they need /bin/sh in the image, which a distroless base lacks.
	ShellForm []string
	// Copies are the final stage's COPY and ADD instructions, as written.
	Copies []string
}

// Final works out the final stage's image configuration. buildArgs are
// the --build-arg values; an ARG without one takes its default.
func (f *File) Final(buildArgs map[string]string) (Image, error) {
	globals := map[string]string{}
	for _, in := range f.GlobalArgs {
		if err := declareArg(in, globals, globals, buildArgs); err != nil {
			return Image{}, fmt.Errorf("dockerfile: line %d: ARG: %w", in.Line, err)
		}
	}
	st := f.Stages[len(f.Stages)-1]
	base, _, err := fromLine(st.From, globals)
	if err != nil {
		return Image{}, err
	}
	img := Image{Base: base, Labels: map[string]string{}}
	vars := map[string]string{}
	for _, in := range st.Instructions {
		if err := img.apply(in, vars, globals, buildArgs); err != nil {
			return Image{}, fmt.Errorf("dockerfile: line %d: %s: %w", in.Line, in.Keyword, err)
		}
	}
	return img, nil
}

// Stage returns the stage named name.
func (f *File) Stage(name string) (Stage, bool) {
	for _, s := range f.Stages {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return Stage{}, false
}

// fromLine reads "FROM [--platform=...] image [AS name]".
func fromLine(in Instruction, vars map[string]string) (base, name string, err error) {
	ws, err := words(in.Args, vars)
	if err != nil {
		return "", "", fmt.Errorf("dockerfile: line %d: FROM: %w", in.Line, err)
	}
	ws = slices.DeleteFunc(ws, func(w string) bool { return strings.HasPrefix(w, "--") })
	switch {
	case len(ws) == 1:
		return ws[0], "", nil
	case len(ws) == 3 && strings.EqualFold(ws[1], "AS"):
		return ws[0], ws[2], nil
	}
	return "", "", fmt.Errorf("dockerfile: line %d: FROM %q: want IMAGE [AS NAME]", in.Line, in.Args)
}

func (img *Image) apply(in Instruction, vars, globals, buildArgs map[string]string) error {
	switch in.Keyword {
	case "ARG":
		return declareArg(in, vars, globals, buildArgs)
	case "ENV":
		pairs, err := keyValues(in.Args, vars, true)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			vars[kv[0]] = kv[1]
			img.setEnv(kv[0], kv[1])
		}
	case "LABEL":
		pairs, err := keyValues(in.Args, vars, false)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			img.Labels[kv[0]] = kv[1]
		}
	case "EXPOSE":
		ws, err := words(in.Args, vars)
		if err != nil {
			return err
		}
		for _, p := range ws {
			if !strings.Contains(p, "/") {
				p += "/tcp"
			}
			if !slices.Contains(img.Ports, p) {
				img.Ports = append(img.Ports, p)
			}
		}
	case "VOLUME":
		vs, err := listOrWords(in.Args, vars)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if !slices.Contains(img.Volumes, v) {
				img.Volumes = append(img.Volumes, v)
			}
		}
	case "USER", "WORKDIR":
		ws, err := words(in.Args, vars)
		if err != nil {
			return err
		}
		if len(ws) != 1 {
			return fmt.Errorf("want one value, got %q", in.Args)
		}
		if in.Keyword == "USER" {
			img.User = ws[0]
		} else {
			img.WorkDir = ws[0]
		}
	case "ENTRYPOINT", "CMD":
		argv, shell, err := command(in.Args)
		if err != nil {
			return err
		}
		if shell {
			img.ShellForm = append(img.ShellForm, in.Keyword)
		}
		if in.Keyword == "ENTRYPOINT" {
			img.Entrypoint = argv
		} else {
			img.Cmd = argv
		}
	case "COPY", "ADD":
		img.Copies = append(img.Copies, in.Args)
	}
	return nil
}

func (img *Image) setEnv(k, v string) {
	for i, e := range img.Env {
		if name, _, _ := strings.Cut(e, "="); name == k {
			img.Env[i] = k + "=" + v
			return
		}
	}
	img.Env = append(img.Env, k+"="+v)
}

// declareArg handles "ARG NAME[=default]": the build argument wins, then
// the default, then (for a global ARG redeclared in a stage) the global
// value. An ARG with none of them stays unset.
func declareArg(in Instruction, vars, globals, buildArgs map[string]string) error {
	ws, err := words(in.Args, vars)
	if err != nil {
		return err // the caller names the line
	}
	for _, w := range ws {
		name, def, hasDef := strings.Cut(w, "=")
		switch v, ok := buildArgs[name]; {
		case ok:
			vars[name] = v
		case hasDef:
			vars[name] = def
		default:
			if g, ok := globals[name]; ok {
				vars[name] = g
			}
		}
	}
	return nil
}

// command reads an ENTRYPOINT or CMD: a JSON array (exec form) or a
// command line run by /bin/sh -c (shell form).
func command(args string) (argv []string, shell bool, err error) {
	if strings.HasPrefix(args, "[") {
		if err := json.Unmarshal([]byte(args), &argv); err == nil {
			return argv, false, nil
		}
	}
	return []string{"/bin/sh", "-c", args}, true, nil
}

// listOrWords reads a JSON array or white-space separated words.
func listOrWords(args string, vars map[string]string) ([]string, error) {
	if strings.HasPrefix(args, "[") {
		var list []string
		if err := json.Unmarshal([]byte(args), &list); err != nil {
			return nil, fmt.Errorf("%q: %w", args, err)
		}
		for i, v := range list {
			out, err := words(v, vars)
			if err != nil {
				return nil, err
			}
			list[i] = strings.Join(out, " ")
		}
		return list, nil
	}
	return words(args, vars)
}

// keyValues reads "k=v k2=v2" (or, for ENV, the legacy "KEY value with
// spaces").
func keyValues(args string, vars map[string]string, legacy bool) ([][2]string, error) {
	ws, err := words(args, vars)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("no key")
	}
	if legacy && !strings.Contains(ws[0], "=") {
		k, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
		v, err := words(rest, vars)
		if err != nil {
			return nil, err
		}
		return [][2]string{{k, strings.Join(v, " ")}}, nil
	}
	out := make([][2]string, 0, len(ws))
	for _, w := range ws {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", w)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}
