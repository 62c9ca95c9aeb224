// Command evalgen writes memrank's labeled evaluation set: synthetic agent
// memories (Qdrant points whose payload is a memory record) and queries with
// graded relevance, as JSON Lines, gzip-compressed when the output name ends
// in .gz. Vectors are built from latent directions so that cosine
// similarities follow a modern embedding model's (see
// examples/eval/README.md); no model is needed. The output is byte-for-byte
// deterministic for a seed.
//
//	go run ./internal/eval/evalgen -seed 1 -out examples/eval/seed1.jsonl.gz
//	go run ./internal/eval/evalgen -seed 2 -out seed2.jsonl.gz -stats
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "evalgen:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("evalgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the PCG source")
	out := fs.String("out", "", "output file (.jsonl or .jsonl.gz); - or empty for standard output")
	stats := fs.Bool("stats", false, "print the measured similarity statistics and the set's counts to standard error")
	fs.IntVar(&cfg.People, "people", cfg.People, "persons around the user")
	fs.IntVar(&cfg.Projects, "projects", cfg.Projects, "projects")
	fs.IntVar(&cfg.Tools, "tools", cfg.Tools, "tools")
	fs.IntVar(&cfg.UserTopics, "user-topics", cfg.UserTopics, "attribute topics of the user")
	fs.IntVar(&cfg.Topics, "topics", cfg.Topics, "attribute topics of every other entity")
	fs.IntVar(&cfg.UserEpisodes, "user-episodes", cfg.UserEpisodes, "one-off event memories about the user")
	fs.IntVar(&cfg.EpisodesMin, "episodes-min", cfg.EpisodesMin, "fewest one-off event memories of another entity")
	fs.IntVar(&cfg.EpisodesMax, "episodes-max", cfg.EpisodesMax, "most one-off event memories of another entity")
	fs.IntVar(&cfg.Queries, "queries", cfg.Queries, "answerable queries")
	fs.IntVar(&cfg.Unanswerable, "unanswerable", cfg.Unanswerable, "unanswerable queries")
	fs.IntVar(&cfg.Popular, "popular", cfg.Popular, "popular distractors")
	fs.IntVar(&cfg.Limit, "limit", cfg.Limit, "the queries' limit")
	fs.IntVar(&cfg.Dim, "dim", cfg.Dim, "vector dimension")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	d, err := generate(cfg)
	if err != nil {
		return err
	}
	data := d.encode()
	if strings.HasSuffix(*out, ".gz") {
		data = gzipped(data)
	}
	if *out == "" || *out == "-" {
		if _, err := stdout.Write(data); err != nil {
			return err
		}
	} else if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	if *stats {
		writeSimilarityTable(stderr, d.similarityStats())
		fmt.Fprintln(stderr)
		d.writeSetStats(stderr)
	}
	return nil
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
