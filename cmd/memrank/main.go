// Command memrank is the retrieval-ranking sidecar for Qdrant and its tools.
// This file and its siblings only wire packages together; the behaviour lives
// in the packages they call.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

// Exit codes: 0 success, 1 a runtime failure (including input lines that
// could not be used), 2 a usage or configuration error.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks errors that are the caller's to fix: wrong flags,
// arguments or configuration.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError carries an exit code for failures already reported on stderr.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a graceful stop; restoring the default
	// handling then lets a second one end the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// env is what every command may read from the process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
	configFile     string
}

// loadConfig loads the effective configuration: defaults, the --config file
// (or $MEMRANK_CONFIG), MEMRANK_* variables, then the flags of fs bound in keys.
func (e *env) loadConfig(fs *pflag.FlagSet, keys map[string]string) (Config, error) {
	c, err := loadConfig(e.configFile, e.environ, fs, keys)
	if err != nil {
		return Config{}, usageError{err}
	}
	return c, nil
}

// isTerminal reports whether w is a terminal, where progress bars go.
// progress is the bar of a batch command (backfill, consolidate, reembed):
// points done so far, on stderr when it is a terminal and not quiet; done
// clears it. Elsewhere both do nothing.
func (e *env) progress(desc string, quiet bool) (set func(done int), done func()) {
	if quiet || !isTerminal(e.stderr) {
		return func(int) {}, func() {}
	}
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(e.stderr), progressbar.OptionSetDescription(desc),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	return func(n int) { _ = bar.Set(n) }, func() { _ = bar.Clear() }
}

// width is the width, in columns, of what e.stdout shows: the terminal's
// when it is one, else $COLUMNS when set, else 0 (no limit: a pipe or a
// file gets whole lines, as kubectl and docker give them).
func (e *env) width() int {
	if f, ok := e.stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(lookupEnv(e.environ, "COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, environ: environ}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "memrank: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// isCobraUsage recognises cobra's own argument and flag errors, which it
// returns as plain errors.
func isCobraUsage(err error) bool {
	var fe *pflag.NotExistError
	if errors.As(err, &fe) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "requires at most"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// suggestFlags adds to an unknown long flag the command's flags it is
// likely a typo or a prefix of: "unknown flag: --htp (did you mean
// --http?)". Other flag errors are returned as they are.
func suggestFlags(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedShortnames() != "" {
		return err
	}
	typed := ne.GetSpecifiedName()
	type near struct {
		name string
		dist int
	}
	var found []near
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(typed, f.Name)
		// A long name stands more slips than a short one: --htp is
		// --http, --ap is not --api-key.
		if d <= 1 || (d == 2 && len(typed) >= 5) || (len(typed) >= 3 && strings.HasPrefix(f.Name, typed)) {
			found = append(found, near{f.Name, d})
		}
	})
	if len(found) == 0 {
		return err
	}
	slices.SortFunc(found, func(a, b near) int { return cmp.Or(a.dist-b.dist, strings.Compare(a.name, b.name)) })
	names := make([]string, 0, 3)
	for _, n := range found[:min(len(found), 3)] {
		names = append(names, "--"+n.name)
	}
	return fmt.Errorf("%w (did you mean %s?)", err, strings.Join(names, " or "))
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours (the
// commonest typo) cost one each.
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "memrank",
		Short: "Retrieval ranking for agent memories kept in Qdrant",
		Long: `memrank stands in front of Qdrant: it asks for more candidates than requested, folds
duplicate memories together, drops memories below a confidence gate and re-ranks the
rest by base score x freshness x access boost, explaining every score.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Every command inherits it: cobra suggests commands, not flags.
	root.SetFlagErrorFunc(suggestFlags)
	root.PersistentFlags().StringVar(&e.configFile, "config", "", "YAML configuration file (default $MEMRANK_CONFIG)")
	root.AddCommand(newVersionCmd(e), newConfigCmd(e), newScoreCmd(e), newQdrantCompatCmd(e), newBenchCmd(e), newServeCmd(e), newExplainCmd(e), newObserveCmd(e), newImportCmd(e), newReembedCmd(e), newForgetCmd(e), newBackfillCmd(e), newEvalCmd(e), newHealthCmd(e))
	root.AddCommand(newConsolidateCmd(e), newReviewCmd(e), newMCPCmd(e), newCreateCollectionCmd(e))
	return root
}

func versionString() string {
	v := version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return fmt.Sprintf("memrank %s (%s, %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print memrank's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(e.stdout, versionString())
			return err
		},
	}
}

func newConfigCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show or check memrank's configuration",
	}
	printCmd := &cobra.Command{
		Use:   "print",
		Short: "Print the effective configuration as YAML, secrets masked",
		Long: `Print the effective configuration: the defaults, overridden by the --config file
(or $MEMRANK_CONFIG), then by MEMRANK_* environment variables. Secrets print as "***".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.loadConfig(nil, nil)
			if err != nil {
				return err
			}
			out, err := c.YAML(true)
			if err != nil {
				return err
			}
			_, err = e.stdout.Write(out)
			return err
		},
	}
	validate := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a configuration file; print every problem with its key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := loadConfig(args[0], e.environ, nil, nil)
			if err != nil {
				fmt.Fprintln(e.stderr, err)
				return exitError{exitUsage}
			}
			if _, err := c.codec(); err != nil {
				fmt.Fprintf(e.stderr, "config: %v\n", err)
				return exitError{exitUsage}
			}
			_, err = fmt.Fprintf(e.stdout, "%s: ok\n", args[0])
			return err
		},
	}
	cmd.AddCommand(printCmd, validate)
	return cmd
}

// lookupEnv is the value of name in environ (the last one set), "" when
// unset.
func lookupEnv(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
