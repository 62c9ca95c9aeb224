package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/server/native"
)

// Import defaults.
const (
	// importMaxLine bounds one line: the HTTP API's body limit.
	importMaxLine = native.DefaultMaxBodyBytes
	// The state file is rewritten after this many acknowledged lines or
	// this long, whichever comes first, and at the end.
	importSaveEvery    = 100
	importSaveInterval = time.Second
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
with status 1, and --resume continues after the last acknowledged line. Lines
acknowledged after the last state write are offered again on resume: give each
observation an observation_id to make that a no-op.

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
	im := &importer{
		path:         path,
		statePath:    o.state,
		collection:   o.collection,
		check:        o.check,
		stderr:       e.stderr,
		saveEvery:    importSaveEvery,
		saveInterval: importSaveInterval,
		maxLine:      importMaxLine,
		now:          time.Now,
	}
	if im.statePath == "" {
		im.statePath = path + ".progress"
	}
	var start importState
	if o.resume {
		if start, err = readImportState(im.statePath, fi.Size()); err != nil {
			return usageError{err}
		}
	} else if !o.check {
		if st, err := readImportState(im.statePath, -1); err == nil && st.Line > 0 {
			fmt.Fprintf(e.stderr, "memrank: note: %s records line %d of an earlier import; starting from line 1 (--resume continues after it)\n",
				im.statePath, st.Line)
		}
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
		im.obs = ob
	}
	if !o.quiet && o.output == "text" && fi.Size() > 0 && isTerminal(e.stderr) {
		bar := progressbar.NewOptions64(fi.Size(),
			progressbar.OptionSetWriter(e.stderr),
			progressbar.OptionSetDescription("importing "+filepath.Base(path)),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
		im.bar = bar
	}

	sum, runErr := im.run(cmd.Context(), f, start)
	if im.bar != nil {
		_ = im.bar.Clear()
	}
	if runErr != nil {
		var se *stopError
		if !errors.As(runErr, &se) {
			return runErr
		}
		fmt.Fprintf(e.stderr, "%s:%d: %v\n", path, se.line, se.err)
		resume := "memrank import --resume"
		if o.state != "" {
			resume += " --state " + o.state
		}
		fmt.Fprintf(e.stderr, "memrank: import stopped at line %d: the write path failed. Lines up to %d are acknowledged in %s; "+
			"once the cause is fixed, continue with: %s %s\n", se.line, sum.LastLine, im.statePath, resume, path)
	}
	if err := writeImportSummary(e.stdout, o.output, sum); err != nil {
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress is what the importer needs of a progress bar.
type progress interface {
	Set64(n int64) error
	Clear() error
}

// importer offers the lines of one file to the write path in order.
type importer struct {
	obs          observer // nil with check
	path         string   // the file's name in messages
	statePath    string
	collection   string // fills lines without one
	check        bool
	stderr       io.Writer
	bar          progress // nil: none
	saveEvery    int
	saveInterval time.Duration
	maxLine      int
	now          func() time.Time

	state     importState // the last acknowledged line
	unsaved   int         // lines acknowledged since the last save
	lastSaved time.Time
}

// importState is the state file: the last acknowledged line and the byte
// offset just after it.
type importState struct {
	File      string    `json:"file"`
	Line      int       `json:"line"`
	Offset    int64     `json:"offset"`
	UpdatedAt time.Time `json:"updated_at"`
}

// importSummary is what an import did.
type importSummary struct {
	File         string         `json:"file"`
	ResumedAfter int            `json:"resumed_after"` // the line the import continued after (0: from the start)
	LastLine     int            `json:"last_line"`     // the last acknowledged line
	Lines        int            `json:"lines"`         // lines read by this run, blank ones included
	Applied      int            `json:"applied"`       // lines the write path decided on (valid ones, with --check)
	Skipped      int            `json:"skipped"`       // blank lines
	Failed       int            `json:"failed"`        // lines reported and skipped
	Decisions    map[string]int `json:"decisions"`
	// Replayed counts lines whose observation_id had been seen: the earlier
	// decision came back and nothing changed. They are not in Decisions.
	Replayed int    `json:"replayed"`
	Stopped  bool   `json:"stopped"` // the write path failed; --resume continues
	Check    bool   `json:"check,omitempty"`
	State    string `json:"state,omitempty"`
}

// stopError is a write-path failure that stops the import at line.
type stopError struct {
	line int
	err  error
}

func (e *stopError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *stopError) Unwrap() error { return e.err }

// run reads f from start.Offset (start.Line lines acknowledged before) and
// offers each line. A write-path failure stops it with a *stopError after
// the state is saved; bad lines are reported and skipped.
func (im *importer) run(ctx context.Context, f io.ReadSeeker, start importState) (importSummary, error) {
	sum := importSummary{File: im.path, ResumedAfter: start.Line, LastLine: start.Line, Decisions: map[string]int{}, Check: im.check}
	if !im.check {
		sum.State = im.statePath
	}
	if start.Offset > 0 {
		if _, err := f.Seek(start.Offset, io.SeekStart); err != nil {
			return sum, fmt.Errorf("%s: %w", im.path, err)
		}
	}
	abs, err := filepath.Abs(im.path)
	if err != nil {
		abs = im.path
	}
	im.state = importState{File: abs, Line: start.Line, Offset: start.Offset}
	im.lastSaved = im.now()
	im.progress()
	br := bufio.NewReaderSize(f, 64<<10)
	for lineNo := start.Line + 1; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			return im.stop(&sum, lineNo, err)
		}
		line, n, tooLong, err := readImportLine(br, im.maxLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return im.stop(&sum, lineNo, fmt.Errorf("reading %s: %w", im.path, err))
		}
		sum.Lines++
		switch trimmed := bytes.TrimSpace(line); {
		case tooLong:
			im.report(&sum, lineNo, fmt.Sprintf("longer than %d bytes, skipped", im.maxLine))
		case len(trimmed) == 0:
			sum.Skipped++
		default:
			obs, err := native.DecodeObserveRequest(trimmed)
			if err != nil {
				im.report(&sum, lineNo, err.Error())
				break
			}
			if obs.Collection == "" {
				if im.collection == "" {
					im.report(&sum, lineNo, "collection: required (in the line, or --collection)")
					break
				}
				obs.Collection = im.collection
			}
			if im.check {
				sum.Applied++
				break
			}
			out, err := im.obs.Observe(ctx, obs)
			if err != nil {
				if !inputFault(err, obs) {
					return im.stop(&sum, lineNo, err)
				}
				im.report(&sum, lineNo, err.Error())
				break
			}
			sum.Applied++
			if out.Replayed {
				sum.Replayed++
			} else {
				sum.Decisions[string(out.Decision)]++
			}
		}
		if err := im.ack(lineNo, n); err != nil {
			return sum, err
		}
		sum.LastLine = lineNo
	}
	if err := im.save(); err != nil {
		return sum, err
	}
	return sum, nil
}

func (im *importer) report(sum *importSummary, line int, reason string) {
	sum.Failed++
	if im.bar != nil {
		_ = im.bar.Clear()
	}
	fmt.Fprintf(im.stderr, "%s:%d: %s\n", im.path, line, reason)
}

// stop saves the state (the lines before line) and returns the stopError.
func (im *importer) stop(sum *importSummary, line int, err error) (importSummary, error) {
	sum.Stopped = true
	if serr := im.save(); serr != nil {
		return *sum, errors.Join(&stopError{line, err}, serr)
	}
	return *sum, &stopError{line, err}
}

// ack records line (n bytes) as acknowledged and saves the state when
// enough lines or time have gone by.
func (im *importer) ack(line int, n int64) error {
	im.state.Line = line
	im.state.Offset += n
	im.unsaved++
	im.progress()
	if im.unsaved >= im.saveEvery || im.now().Sub(im.lastSaved) >= im.saveInterval {
		return im.save()
	}
	return nil
}

func (im *importer) progress() {
	if im.bar != nil {
		_ = im.bar.Set64(im.state.Offset)
	}
}

// save writes the state file atomically (a temporary file renamed over
// it), so that a crash leaves the old state or the new one.
func (im *importer) save() error {
	if im.check {
		return nil
	}
	im.state.UpdatedAt = im.now().UTC()
	b, err := json.MarshalIndent(im.state, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(im.statePath), filepath.Base(im.statePath)+".tmp*")
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), im.statePath); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("state file: %w", err)
	}
	im.unsaved, im.lastSaved = 0, im.now()
	return nil
}

// readImportState reads a state file. size >= 0 checks it against the
// file: the offset must lie within it, at a line start.
func readImportState(path string, size int64) (importState, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return importState{}, fmt.Errorf("--resume: no state file %s (nothing to resume; run without --resume, or give --state)", path)
		}
		return importState{}, fmt.Errorf("--resume: %w", err)
	}
	var st importState
	if err := json.Unmarshal(b, &st); err != nil || st.Line < 0 || st.Offset < 0 || st.Offset > 0 && st.Line == 0 {
		return importState{}, fmt.Errorf("--resume: %s is not an import state file", path)
	}
	if size >= 0 && st.Offset > size {
		return importState{}, fmt.Errorf("--resume: %s records line %d at byte %d, but the file has %d bytes: is it the same file?",
			path, st.Line, st.Offset, size)
	}
	return st, nil
}

// readImportLine reads one line without its newline, and the bytes it
// took. Past max bytes the rest of the line is read and dropped (tooLong).
// io.EOF comes only when nothing was left to read.
func readImportLine(r *bufio.Reader, max int) (line []byte, n int64, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		n += int64(len(chunk))
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && n == 0:
			return nil, 0, false, io.EOF
		case err != nil && err != io.EOF:
			return nil, n, false, err
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) > max {
			tooLong, line = true, nil
		}
		return line, n, tooLong, nil
	}
}

func writeImportSummary(w io.Writer, format string, s importSummary) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	verb := "imported"
	switch {
	case s.Check:
		verb = "checked"
	case s.Stopped:
		verb = "stopped importing"
	}
	from := ""
	if s.ResumedAfter > 0 {
		from = fmt.Sprintf(" after line %d", s.ResumedAfter)
	}
	applied := "applied"
	if s.Check {
		applied = "valid"
	}
	fmt.Fprintf(w, "%s %s%s: %d lines read, %d %s, %d skipped (blank), %d failed; last line %d\n",
		verb, s.File, from, s.Lines, s.Applied, applied, s.Skipped, s.Failed, s.LastLine)
	if len(s.Decisions) == 0 && s.Replayed == 0 {
		return nil
	}
	// Decisions in the write path's order, any others after them.
	order := []string{string(dedup.DecisionInserted), string(dedup.DecisionRestatement), string(dedup.DecisionIndependent),
		string(dedup.DecisionContradiction), string(dedup.DecisionCorrected), string(dedup.DecisionConfirmed), string(dedup.DecisionRejected)}
	var others []string
	for d := range s.Decisions {
		if !slices.Contains(order, d) {
			others = append(others, d)
		}
	}
	slices.Sort(others)
	for _, d := range append(order, others...) {
		if n, ok := s.Decisions[d]; ok {
			if _, err := fmt.Fprintf(w, "  %-14s %d\n", d, n); err != nil {
				return err
			}
		}
	}
	if s.Replayed > 0 {
		_, err := fmt.Fprintf(w, "  %-14s %d (observation_id seen before: nothing changed)\n", "replayed", s.Replayed)
		return err
	}
	return nil
}
