package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memrank/memrank/internal/importer"
)

type importOptions struct {
	write      writeOptions
	collection string
	state      string
	resume     bool
	check      bool
	quiet      bool
	output     string
}

func newImportCmd(e *env) *cobra.Command { return importCommand(e, openObserver) }

func importCommand(e *env, open openObserverFunc) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import FILE.jsonl",
		Short: "Offer a file of observations to the write path, in order, and summarise the decisions",
		Long: `Read FILE.jsonl, one /v1/observe body per line (the JSON memrank observe --json takes), and
offer each observation to the write path in order, one at a time. --collection fills the
collection of lines without one. Blank lines are skipped. A line that is not a valid
observation (bad JSON, an unknown key, a wrong type, no text), or that the write path
refuses as such, is reported on stderr as FILE:N: reason and skipped; the import goes on,
and memrank exits with status 1 at the end. At the end a summary of the decisions is
printed (--output json for a JSON object).

Progress is recorded in a state file (FILE.jsonl.progress, or --state): the last line
acknowledged, rewritten every 100 lines or every second and at the end. When the write
path fails (the upstream or the server is down, a timeout, an interrupt) the import stops
with status 1 and prints the command that continues it: the same flags (the API key as a
placeholder) and --resume, which continues after the last acknowledged line. The state
file records where the import writes (the memrank or store, tenant, the key's fingerprint,
the collection): a resume that would write anywhere else is refused. Lines acknowledged
after the last state write are offered again on resume: give each observation an
observation_id to make that a no-op.

A progress bar is shown on stderr when it is a terminal (not with --quiet or --output
json). --check only validates the lines: nothing is written, and no write path is needed.

With --url it posts each line to a running memrank (POST URL/v1/observe). Without, it runs
the write path in process on the configured upstream (--upstream, or the embedded store in
--data, which a running serve holds locked).`,
		Example: `  memrank import --collection memories observations.jsonl
  memrank import --resume observations.jsonl
  memrank import --url http://localhost:6333 --api-key KEY --output json observations.jsonl
  memrank import --check observations.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd, e, open, &o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "collection of the lines that name none")
	f.StringVar(&o.state, "state", "", "state file recording the last acknowledged line (default FILE.progress)")
	f.BoolVar(&o.resume, "resume", false, "continue after the last acknowledged line of the state file")
	f.BoolVar(&o.check, "check", false, "only validate the lines; write nothing")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	f.StringVarP(&o.output, "output", "o", "text", "summary format: text or json")
	o.write.addFlags(f)
	return cmd
}

func runImport(cmd *cobra.Command, e *env, open openObserverFunc, o *importOptions, path string) error {
	if o.output != "text" && o.output != "json" {
		return usageError{fmt.Errorf("--output %q: want text or json", o.output)}
	}
	if o.check && o.resume {
		return usageError{errors.New("--check reads the whole file; it does not resume")}
	}
	f, err := os.Open(path)
	if err != nil {
		return usageError{err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return usageError{fmt.Errorf("%s is a directory", path)}
	}
	cfg := importer.Config{Path: path, StatePath: o.state, Collection: o.collection, Check: o.check, Errors: e.stderr}
	if cfg.StatePath == "" {
		cfg.StatePath = path + ".progress"
	}
	if !o.check {
		if cfg.Target, err = importTarget(e, cmd, o); err != nil {
			return err
		}
	}
	start, err := importStart(e, o, cfg.StatePath, fi.Size(), cfg.Target)
	if err != nil {
		return err
	}
	if !o.check {
		ob, closeFn, err := open(cmd.Context(), e, cmd, &o.write)
		if err != nil {
			return err
		}
		defer func() {
			if err := closeFn(); err != nil {
				fmt.Fprintf(e.stderr, "memrank: closing the write path: %v\n", err)
			}
		}()
		cfg.Observer = ob
	}
	if !o.quiet && o.output == "text" && fi.Size() > 0 && isTerminal(e.stderr) {
		cfg.Progress = importer.NewProgressBar(e.stderr, path, fi.Size())
	}

	sum, runErr := importer.New(cfg).Run(cmd.Context(), f, start)
	if cfg.Progress != nil {
		_ = cfg.Progress.Clear()
	}
	if runErr != nil {
		var se *importer.StopError
		if !errors.As(runErr, &se) {
			return runErr
		}
		fmt.Fprintf(e.stderr, "%s:%d: %v\n", path, se.Line, se.Err)
		fmt.Fprintf(e.stderr, "memrank: import stopped at line %d: the write path failed. Lines up to %d are acknowledged in %s; "+
			"once the cause is fixed, continue with: %s\n", se.Line, sum.LastLine, cfg.StatePath, resumeCommand(cmd, path))
	}
	if o.output == "json" {
		err = sum.WriteJSON(e.stdout)
	} else {
		err = sum.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	switch {
	case runErr != nil:
		return exitError{exitFailure}
	case sum.Failed > 0:
		fmt.Fprintf(e.stderr, "memrank: %d line(s) could not be imported (reported above)\n", sum.Failed)
		return exitError{exitFailure}
	}
	return nil
}

// importStart is where the import starts: after the state file's line with
// --resume, else at the top (saying so when the state file records an
// earlier import, which this one will overwrite). --check reads from the
// top and writes no state.
func importStart(e *env, o *importOptions, statePath string, size int64, target string) (importer.State, error) {
	if o.check {
		return importer.State{}, nil
	}
	if !o.resume {
		if st, err := importer.ReadState(statePath, -1); err == nil && st.Line > 0 {
			fmt.Fprintf(e.stderr, "memrank: note: %s records line %d of an earlier import; starting from line 1 (--resume continues after it)\n",
				statePath, st.Line)
		}
		return importer.State{}, nil
	}
	st, err := importer.ReadState(statePath, size)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, usageError{fmt.Errorf("--resume: no state file %s (nothing to resume; run without --resume, or give --state)", statePath)}
	case err != nil:
		return st, usageError{fmt.Errorf("--resume: %w", err)}
	case st.Target != "" && st.Target != target:
		return st, usageError{fmt.Errorf("--resume: %s records an import into %s, but this command writes into %s: "+
			"resume with the original command's flags (the hint printed when it stopped)", statePath, st.Target, target)}
	}
	return st, nil
}

// importTarget describes where an import writes, for the state file: the
// running memrank (--url) or the in-process upstream, the tenant, the API
// key's fingerprint (never the key) and the collection the flags give.
func importTarget(e *env, cmd *cobra.Command, o *importOptions) (string, error) {
	w := &o.write
	var parts []string
	if w.url != "" {
		parts = append(parts, "memrank at "+strings.TrimRight(w.url, "/"))
	} else {
		c, err := e.loadConfig(cmd.Flags(), writeFlagKeys)
		if err != nil {
			return "", err
		}
		if c.Upstream.GRPC != "" {
			parts = append(parts, "Qdrant at "+c.Upstream.GRPC+" (in process)")
		} else {
			dir, err := filepath.Abs(c.Store.DataDir)
			if err != nil {
				return "", err
			}
			parts = append(parts, "the embedded store in "+dir+" (in process)")
		}
	}
	if w.tenants.tenant != "" {
		parts = append(parts, "tenant "+w.tenants.tenant)
	}
	if w.apiKey != "" {
		sum := sha256.Sum256([]byte(w.apiKey))
		parts = append(parts, "api key sha256:"+hex.EncodeToString(sum[:6]))
	}
	if o.collection != "" {
		parts = append(parts, "collection "+o.collection)
	}
	return strings.Join(parts, ", "), nil
}

// resumeCommand is the command that continues an import: the original
// one's flags as given (an API key as a placeholder: it is not printed),
// with --resume.
func resumeCommand(cmd *cobra.Command, path string) string {
	words := []string{"memrank", "import"}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "resume":
			return
		case "api-key":
			words = append(words, "--api-key", "<your key>")
			return
		}
		if f.Value.Type() == "bool" {
			words = append(words, "--"+f.Name+"="+f.Value.String())
			return
		}
		words = append(words, "--"+f.Name, shellQuote(f.Value.String()))
	})
	return strings.Join(append(words, "--resume", shellQuote(path)), " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
