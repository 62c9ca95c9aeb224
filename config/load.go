package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	kyaml "github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Environment variables Load reads.
const (
	// EnvPrefix starts every variable that sets a key:
	// MEMRANK_SCORING__WEIGHTS__SOURCE sets scoring.weights.source.
	EnvPrefix = "MEMRANK_"
	// EnvConfigFile names the YAML file when Source.File is empty, so a
	// --config flag wins over it.
	EnvConfigFile = "MEMRANK_CONFIG"
)

// Source says where Load reads the configuration from.
type Source struct {
	// File is the YAML file; "" means $MEMRANK_CONFIG if set, else none.
	File string
	// Environ is the environment in os.Environ() form. Only MEMRANK_*
	// variables and those EnvDefaults names are read.
	Environ []string
	// Flags may be nil. Only flags the user actually set override.
	Flags *pflag.FlagSet
	// FlagKeys maps a flag name to the key it sets, e.g. "upstream" ->
	// "upstream.grpc". Flags not listed here are not configuration (say,
	// --config itself) and are ignored.
	FlagKeys map[string]string
	// Data, when not nil, is the file's contents: File then only names it
	// (in errors), and nothing is read from disk.
	Data []byte
	// EnvDefaults maps a key to a variable of another program's that fills
	// it when the file, the MEMRANK_ variables and the flags leave it empty
	// (telemetry.otlp_endpoint: OTEL_EXPORTER_OTLP_ENDPOINT).
	EnvDefaults map[string]string
	// RemovedKeys maps a key earlier versions read to what replaced it: an
	// unknown-key error for it says so.
	RemovedKeys map[string]string
	// NotConfig names MEMRANK_ variables that are not configuration (a
	// client's settings, a test suite's switches), which a shell may export
	// for other programs: Load neither reads nor refuses them. Any other
	// MEMRANK_ variable that names no key is still an error.
	NotConfig []string
}

// Load reads the configuration into dst, a pointer to a struct whose
// fields carry koanf tags (their keys) and hold the defaults: the file, then
// the environment, then the flags, each overriding the one before. Maps such
// as scoring.decay.half_lives are merged entry by entry (an entry that is a
// section merges into the entry it replaces); lists such as
// scoring.extractor.models are replaced whole. Then dst is validated: its
// Validate if it has one, else ValidateSections.
//
// The error, if any, lists every problem found, from every source, as
// *Error values joined with errors.Join; dst is then in an unspecified state.
func Load(src Source, dst any) error {
	name := src.File
	if name == "" {
		name = lookupEnv(src.Environ, EnvConfigFile)
	}
	var p koanf.Provider
	switch {
	case src.Data != nil:
		p = bytesProvider(src.Data)
	case name != "":
		p = file.Provider(name)
	}
	return load(src, name, p, dst)
}

// bytesProvider is a koanf.Provider of YAML already in memory.
type bytesProvider []byte

func (b bytesProvider) ReadBytes() ([]byte, error) { return b, nil }

func (b bytesProvider) Read() (map[string]any, error) {
	return nil, errors.New("config: the YAML is given as bytes only")
}

// load is Load with the file's provider given, so tests and the fuzz target
// can supply YAML bytes under any name.
func load(src Source, name string, p koanf.Provider, dst any) error {
	root := reflect.ValueOf(dst)
	if root.Kind() != reflect.Pointer || root.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: Load needs a pointer to a struct, got %T", dst)
	}
	root = root.Elem()
	var errs []error
	if p != nil {
		errs = append(errs, loadYAML(root, name, p)...)
	}
	set := origins{}
	errs = append(errs, loadEnv(root, src.Environ, src.NotConfig, set)...)
	errs = append(errs, loadFlags(root, src.Flags, src.FlagKeys, set)...)
	errs = append(errs, loadEnvDefaults(root, src.Environ, src.EnvDefaults, set)...)
	hintRemoved(errs, src.RemovedKeys)
	// Values that did not decode are left as they were: validating still
	// reports every other problem at once.
	var invalid []error
	if v, ok := dst.(Validator); ok {
		invalid = flatten(v.Validate())
	} else {
		invalid = flatten(ValidateSections(dst))
	}
	set.attribute(invalid)
	return errors.Join(append(errs, invalid...)...)
}

// origins maps a key to the variable or flag that last set it ("$NAME",
// "--name"). A value those give decodes alone, so its source is known;
// Validate sees only the merged values, and without this a value refused
// there from a variable would not say which variable to fix.
type origins map[string]string

// attribute gives each problem Validate found without a source the source
// of its key, or of the closest table, list or section above it that a
// variable or flag set whole.
func (o origins) attribute(errs []error) {
	for _, err := range errs {
		e, ok := err.(*Error)
		if !ok || e.Source != "" {
			continue
		}
		for k := e.Key; k != ""; {
			if src, ok := o[k]; ok {
				e.Source = src
				break
			}
			i := strings.LastIndexAny(k, ".[")
			if i < 0 {
				break
			}
			k = k[:i]
		}
	}
}

// hintRemoved adds to each unknown key that an earlier version read what
// replaced it.
func hintRemoved(errs []error, removed map[string]string) {
	for _, err := range errs {
		if e, ok := err.(*Error); ok && errors.Is(e, ErrUnknownKey) {
			if hint, ok := removed[e.Key]; ok {
				e.Hint = hint
			}
		}
	}
}

// loadEnvDefaults fills each key of defaults that is still empty from its
// variable.
func loadEnvDefaults(root reflect.Value, environ []string, defaults map[string]string, set origins) []error {
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(defaults)) {
		path := strings.Split(key, ".")
		t, ok := resolve(root, path)
		if !ok || t.entry != "" {
			errs = append(errs, &Error{Source: "$" + defaults[key], Key: key, Problem: ErrUnknownKey.Error(), err: ErrUnknownKey})
			continue
		}
		if !t.v.IsZero() {
			continue
		}
		if v := lookupEnv(environ, defaults[key]); v != "" {
			d := decoder{source: "$" + defaults[key], text: true}
			d.set(root, path, v)
			if len(d.errs) == 0 {
				set[key] = d.source
			}
			errs = append(errs, d.errs...)
		}
	}
	return errs
}

// loadYAML merges a YAML document into root.
func loadYAML(root reflect.Value, name string, p koanf.Provider) []error {
	raw, err := parseYAML(p)
	if err != nil {
		return yamlErrors(name, err)
	}
	d := decoder{source: name}
	d.decodeStruct(field{}, raw, root)
	return d.errs
}

// parseYAML reads and parses a document into a nested map. The file is user
// input that reaches a third-party parser, so a panic in that parser is
// turned into an error: a bad config file must never crash memrank.
func parseYAML(p koanf.Provider) (raw map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			raw, err = nil, fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	k := koanf.New(".")
	if err := k.Load(p, kyaml.Parser()); err != nil {
		return nil, err
	}
	return k.Raw(), nil
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// yamlErrors turns a read or parse failure into errors naming the file and,
// for YAML problems, the line.
func yamlErrors(name string, err error) []error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return []error{&Error{Source: name, Problem: pe.Err.Error(), err: pe.Err}}
	}
	if te, ok := errors.AsType[*yaml.TypeError](err); ok && len(te.Errors) > 0 {
		// One per duplicated key, or one saying the document is not a
		// mapping, the only type a map[string]any refuses.
		errs := make([]error, len(te.Errors))
		for i, msg := range te.Errors {
			if strings.Contains(msg, "cannot unmarshal") {
				msg = yamlLine.FindString(msg) + "want a mapping of keys at the top level"
			}
			errs[i] = &Error{Source: name, Problem: msg, err: err}
		}
		return errs
	}
	return []error{&Error{Source: name, Problem: strings.TrimPrefix(err.Error(), "yaml: "), err: err}}
}

// loadEnv merges every MEMRANK_ variable into root. The name after the prefix
// is the key, upper-cased, with __ between levels: MEMRANK_UPSTREAM__GRPC is
// upstream.grpc. Variables are applied in name order, so a whole-map
// variable (MEMRANK_SCORING__DECAY__HALF_LIVES) comes before the entry
// variables below it, which win. The variables in notConfig are skipped.
func loadEnv(root reflect.Value, environ, notConfig []string, set origins) []error {
	p := env.Provider("", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, value string) (string, any) {
			if name == EnvConfigFile || slices.Contains(notConfig, name) {
				return "", nil // the file is read by Load; the others are not ours
			}
			return name, value
		},
	})
	vars, err := p.Read()
	if err != nil {
		return []error{&Error{Source: "environment", Problem: err.Error(), err: err}}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		path := strings.Split(strings.TrimPrefix(name, EnvPrefix), "__")
		for i := range path {
			path[i] = strings.ToLower(path[i])
		}
		d := decoder{source: "$" + name, text: true}
		d.set(root, path, vars[name])
		if len(d.errs) == 0 {
			set[strings.Join(path, ".")] = d.source
		}
		errs = append(errs, d.errs...)
	}
	return errs
}

// loadFlags merges the flags the user set into root. Every binding in keys is
// checked, set or not, so a binding to a key that does not exist fails the
// first time the program runs rather than the first time someone uses it.
func loadFlags(root reflect.Value, fs *pflag.FlagSet, keys map[string]string, set origins) []error {
	var errs []error
	bad := make(map[string]bool)
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		if _, ok := resolve(root, strings.Split(keys[name], ".")); !ok {
			bad[name] = true
			errs = append(errs, &Error{Source: "--" + name, Key: keys[name], Problem: ErrUnknownKey.Error(), err: ErrUnknownKey})
		}
	}
	if fs == nil {
		return errs
	}
	p := posflag.ProviderWithFlag(fs, "", nil, func(f *pflag.Flag) (string, any) {
		if _, ok := keys[f.Name]; !ok || bad[f.Name] {
			return "", nil
		}
		return f.Name, posflag.FlagVal(fs, f)
	})
	values, err := p.Read() // with no koanf instance, only changed flags are returned
	if err != nil {
		return append(errs, &Error{Source: "flags", Problem: err.Error(), err: err})
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		d := decoder{source: "--" + name, text: true}
		d.set(root, strings.Split(keys[name], "."), values[name])
		if len(d.errs) == 0 {
			set[keys[name]] = d.source
		}
		errs = append(errs, d.errs...)
	}
	return errs
}

// lookupEnv returns the value of the last name=value entry for name, the one
// that wins when a process is started with this environment.
func lookupEnv(environ []string, name string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}
