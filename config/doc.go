// Package config reads a configuration made of sections into a struct:
// defaults first, then a YAML file, MEMRANK_* environment variables and
// command-line flags, and checks it so that a bad setting stops the program
// at start-up with an error that names the key and the value.
//
// It knows no memrank setting. A program's configuration is a struct of
// sections, each a component's own Config type whose fields carry koanf tags
// (their keys) and whose Validate names bad keys relative to the section
// (package check); memrank's is composed in cmd/memrank. Load decodes into
// it, ValidateSections validates each section with its key in front, and
// YAML renders it back. The keys in the examples below are memrank's.
//
// # Sources
//
// Load applies, in order, each overriding the last: the defaults the
// destination holds, the YAML file (Source.File, else $MEMRANK_CONFIG), the
// environment, the flags the user set. The YAML keys are the koanf tags of
// the struct's fields; fields without one are not configuration (a
// component's wiring) and are neither read nor printed. Tables
// (scoring.source_levels, scoring.type_priors, scoring.decay.half_lives,
// scoring.decay.type_categories, tenancy.api_keys) are merged entry by entry
// over the defaults, so a file can add a decay category without repeating
// the others; lists (scoring.extractor.models) are replaced whole. A setting left empty (null) in the file is not set; a
// table entry or list element left empty is an error.
// Durations are Go duration strings ("5s", "1h30m"); a bare number is
// refused, since it does not say its unit.
//
// An environment variable names a key in upper case after MEMRANK_, with __
// between levels: MEMRANK_UPSTREAM__GRPC=host:6334,
// MEMRANK_SCORING__WEIGHTS__SOURCE=0.5,
// MEMRANK_SCORING__DECAY__HALF_LIVES__LEGAL=45 (one entry; entry names are
// lower-cased). Values are parsed to the key's type. A list of names is
// comma-separated, a table
// is comma-separated key=value pairs
// (MEMRANK_TENANCY__API_KEYS=key1=alice,key2=bob, the only way to give API
// keys, whose case a variable name would lose), and any list, table or
// section may be given in YAML flow syntax instead
// (MEMRANK_SCORING__EXTRACTOR__MODELS='[{pattern: llama, quality: 0.7}]').
// Variables are applied in name order, so an entry variable wins over its
// whole-table variable. A MEMRANK_ variable that names no key is an error,
// unless Source.NotConfig lists it as another program's.
// OTEL_EXPORTER_OTLP_ENDPOINT fills telemetry.otlp_endpoint when nothing else
// sets it. Flags are bound to keys by Source.FlagKeys and parsed the same way.
//
// # Errors
//
// Every problem is an *Error; Load and Validate report all of them at once,
// joined with errors.Join, one per line. Each line is
//
//	config: [SOURCE: ][KEY: ]PROBLEM
//
// SOURCE says where a value was read: the file path as given, $NAME for an
// environment variable, --name for a flag. A problem Validate finds in the
// merged configuration names the variable or flag that set its key (or the
// whole table, list or section above it), since each sets one key; it has
// no SOURCE when its value came from the file or the defaults, or when a
// rule spans keys (scoring.weights' sum). KEY is the full dotted key, with list
// elements indexed from 0 (scoring.extractor.models[1].pattern). The
// PROBLEM texts are:
//
//	config: FILE: line N: MESSAGE                    the file is not valid YAML
//	config: FILE: MESSAGE                            the file cannot be read
//	config: SOURCE: unknown key "KEY"                no such key (errors.Is ErrUnknownKey)
//	config: SOURCE: KEY: want TYPE, got VALUE        a value of the wrong type
//	config: SOURCE: KEY[i]: missing "NAME"           a table row without a required key
//	config: KEY: sum is S, want 1 (within 1e-6)      scoring.weights
//	config: KEY: V is outside [0, 1]                 weights, levels, priors, qualities, thresholds
//	config: KEY: V is outside (0, 1]                 scoring.confirm.max_confidence
//	config: KEY: V is not positive                   half-lives, floor_k, timeouts, intervals
//	config: KEY: V is not finite                     half-lives, floor_k
//	config: KEY: V is negative                       dedup.min_independent_gap
//	config: KEY: N is less than MIN                  counts and sizes
//	config: KEY: V is not below KEY2 (V2)            scoring.tiers, which must descend
//	config: KEY: V is below KEY2 (V2)                scoring.stats.high
//	config: KEY: V is above KEY2 (V2)                dedup.judge_threshold
//	config: KEY: "P" does not compile: ERROR         an extractor pattern
//	config: KEY: "V" is not one of A, B              enumerations
//	config: KEY: "V" is also KEY2                    two settings that must differ
//	config: KEY: "V" has no half-life in KEY2        scoring.decay.type_categories
//	config: KEY: must not be empty                   a required name
//	config: KEY: has an entry with an empty name     a table
//	config: KEY: "V" is not host:port                upstream.grpc, listen.*
//	config: KEY: "V" is not an http(s) URL           base URLs, upstream.rest
//
// plus texts of the same shape for the replica id, API keys with white space
// and the tenancy rules. For example:
//
//	config: /etc/memrank.yaml: unknown key "scoring.wieghts"
//	config: $MEMRANK_SCORING__WEIGHTS__SOURCE: scoring.weights.source: want a number, got "high"
//	config: scoring.weights: sum is 1.1, want 1 (within 1e-6)
//	config: scoring.gates.render: 1.5 is outside [0, 1]
//	config: $MEMRANK_SCORING__GATES__RETRIEVAL: scoring.gates.retrieval: 1.5 is outside [0, 1]
//
// A secret (the api_key settings and the keys of tenancy.api_keys) is never
// shown in an error: its kind is given instead ("got a number (secret, not
// shown)"). Validate names an entry of tenancy.api_keys by its placeholder
// in YAML(true) (tenancy.api_keys.***2); a load error names it
// tenancy.api_keys.***.
package config
