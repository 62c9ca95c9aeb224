// Package deps pins the module versions the packages under construction will
// import, so that parallel work does not race on go.mod. It is removed once
// every module here is imported by real code.
package deps

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/uuid"
	_ "github.com/knadh/koanf/parsers/yaml"
	_ "github.com/knadh/koanf/providers/env/v2"
	_ "github.com/knadh/koanf/providers/file"
	_ "github.com/knadh/koanf/providers/posflag"
	_ "github.com/knadh/koanf/v2"
	_ "github.com/qdrant/go-client/qdrant"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "github.com/viterin/vek/vek32"
	_ "github.com/zeebo/xxh3"
	_ "go.etcd.io/bbolt"
	_ "go.uber.org/goleak"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/text/unicode/norm"
	_ "google.golang.org/grpc"
	_ "google.golang.org/grpc/test/bufconn"
)
