// Package importer offers a JSON Lines file of observations (one
// /v1/observe body a line) to the write path in order, one at a time. Bad
// lines are reported and skipped; a failing write path stops the import.
// The last acknowledged line is kept in a state file, so that a stopped
// import can resume after it, and a Summary counts the decisions.
package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/apiclient"
	"github.com/memrank/memrank/server/native"
)

// Defaults of Config.
const (
	// DefaultMaxLine bounds one line: the HTTP API's body limit, so that a
	// line imports in process exactly when it would post.
	DefaultMaxLine = native.DefaultMaxBodyBytes
	// The state file is rewritten after this many acknowledged lines or
	// this long, whichever comes first, and at the end: often enough that
	// a resume repeats little, seldom enough that writing it costs little.
	DefaultSaveEvery    = 100
	DefaultSaveInterval = time.Second
)

// Progress is what an import needs of a progress display.
type Progress interface {
	// Update reports the bytes read so far and the last line offered.
	Update(offset int64, line int) error
	Clear() error
}

// Config is one import of one file.
type Config struct {
	// Observer is the write path; nil with Check.
	Observer apiclient.Observer
	// Path is the file's name in messages and in the state file.
	Path string
	// StatePath is the state file; unused with Check.
	StatePath string
	// Collection fills the lines that name none.
	Collection string
	// Target describes where the import writes; it is kept in the state
	// file, for a resume to check.
	Target string
	// Check only validates the lines: nothing is offered or saved.
	Check bool
	// Errors receives each bad line as PATH:N: reason.
	Errors io.Writer
	// Progress follows the bytes acknowledged; nil: none.
	Progress Progress
	// Zero values take the defaults above.
	SaveEvery    int
	SaveInterval time.Duration
	MaxLine      int
	// Now is the clock of the state file; nil: time.Now.
	Now func() time.Time
}

// Importer runs one import; it is not safe for concurrent use.
type Importer struct {
	cfg Config

	state     State // the last acknowledged line
	unsaved   int   // lines acknowledged since the last save
	lastSaved time.Time
}

// New makes an importer of c, with the defaults filled in.
func New(c Config) *Importer {
	if c.SaveEvery == 0 {
		c.SaveEvery = DefaultSaveEvery
	}
	if c.SaveInterval == 0 {
		c.SaveInterval = DefaultSaveInterval
	}
	if c.MaxLine == 0 {
		c.MaxLine = DefaultMaxLine
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Importer{cfg: c}
}

// StopError is a write-path failure that stopped the import at Line; the
// lines before it are acknowledged in the state file.
type StopError struct {
	Line int
	Err  error
}

func (e *StopError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *StopError) Unwrap() error { return e.Err }

// Run reads f from start.Offset (start.Line lines acknowledged before) and
// offers each line. A write-path failure stops it with a *StopError after
// the state is saved; bad lines are reported and skipped. The summary is
// filled either way.
func (im *Importer) Run(ctx context.Context, f io.ReadSeeker, start State) (Summary, error) {
	c := &im.cfg
	sum := Summary{File: c.Path, ResumedAfter: start.Line, LastLine: start.Line, Decisions: map[string]int{}, Check: c.Check}
	if !c.Check {
		sum.State = c.StatePath
	}
	if start.Offset > 0 {
		if _, err := f.Seek(start.Offset, io.SeekStart); err != nil {
			return sum, fmt.Errorf("%s: %w", c.Path, err)
		}
	}
	abs, err := filepath.Abs(c.Path)
	if err != nil {
		abs = c.Path
	}
	im.state = State{File: abs, Target: im.cfg.Target, Line: start.Line, Offset: start.Offset}
	im.lastSaved = c.Now()
	im.progress()
	br := bufio.NewReaderSize(f, 64<<10)
	for lineNo := start.Line + 1; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			return im.stop(&sum, lineNo, err)
		}
		line, n, tooLong, err := readLine(br, c.MaxLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return im.stop(&sum, lineNo, fmt.Errorf("reading %s: %w", c.Path, err))
		}
		sum.Lines++
		if err := im.offer(ctx, &sum, lineNo, line, tooLong); err != nil {
			return im.stop(&sum, lineNo, err)
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

// offer decodes one line and offers it to the write path, counting what
// became of it in sum. A bad line is reported and not an error; the error
// is the write path's failure.
func (im *Importer) offer(ctx context.Context, sum *Summary, lineNo int, line []byte, tooLong bool) error {
	c := &im.cfg
	trimmed := bytes.TrimSpace(line)
	switch {
	case tooLong:
		im.report(sum, lineNo, fmt.Sprintf("longer than %d bytes, skipped", c.MaxLine))
		return nil
	case len(trimmed) == 0:
		sum.Skipped++
		return nil
	}
	obs, err := native.DecodeObserveRequest(trimmed)
	if err != nil {
		im.report(sum, lineNo, err.Error())
		return nil
	}
	if obs.Collection == "" {
		if c.Collection == "" {
			im.report(sum, lineNo, "collection: required (in the line, or --collection)")
			return nil
		}
		obs.Collection = c.Collection
	}
	// The write path's own rules: --check refuses what an import would, and
	// a bad line costs no round trip.
	if err := obs.Validate(dedup.DefaultMaxTextBytes); err != nil {
		im.report(sum, lineNo, err.Error())
		return nil
	}
	if c.Check {
		sum.Applied++
		return nil
	}
	out, err := c.Observer.Observe(ctx, obs)
	if err != nil {
		if !apiclient.InputFault(err, obs) {
			return err
		}
		im.report(sum, lineNo, err.Error())
		return nil
	}
	sum.Applied++
	if out.Replayed {
		sum.Replayed++
	} else {
		sum.Decisions[string(out.Decision)]++
	}
	return nil
}

func (im *Importer) report(sum *Summary, line int, reason string) {
	sum.Failed++
	if im.cfg.Progress != nil {
		_ = im.cfg.Progress.Clear()
	}
	fmt.Fprintf(im.cfg.Errors, "%s:%d: %s\n", im.cfg.Path, line, reason)
}

// stop saves the state (the lines before line) and returns the StopError.
func (im *Importer) stop(sum *Summary, line int, err error) (Summary, error) {
	sum.Stopped = true
	if serr := im.save(); serr != nil {
		return *sum, errors.Join(&StopError{line, err}, serr)
	}
	return *sum, &StopError{line, err}
}

// ack records line (n bytes) as acknowledged and saves the state when
// enough lines or time have gone by.
func (im *Importer) ack(line int, n int64) error {
	im.state.Line = line
	im.state.Offset += n
	im.unsaved++
	im.progress()
	if im.unsaved >= im.cfg.SaveEvery || im.cfg.Now().Sub(im.lastSaved) >= im.cfg.SaveInterval {
		return im.save()
	}
	return nil
}

func (im *Importer) progress() {
	if im.cfg.Progress != nil {
		_ = im.cfg.Progress.Update(im.state.Offset, im.state.Line)
	}
}

// readLine reads one line without its newline, and the bytes it took.
// Past max bytes the rest of the line is read and dropped (tooLong).
// io.EOF comes only when nothing was left to read.
func readLine(r *bufio.Reader, max int) (line []byte, n int64, tooLong bool, err error) {
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
