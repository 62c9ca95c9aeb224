package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// State is the state file: the last acknowledged line and the byte offset
// just after it, so that a resume seeks straight there.
type State struct {
	File string `json:"file"`
	// Target says where the import writes (the memrank or store, the
	// tenant, a key's fingerprint, the collection): a resume must write to
	// the same place.
	Target    string    `json:"target,omitempty"`
	Line      int       `json:"line"`
	Offset    int64     `json:"offset"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ReadState reads a state file. size >= 0 checks it against the file of
// that size: the offset must lie within it. A missing file is an error
// that matches fs.ErrNotExist.
func ReadState(path string, size int64) (State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil || st.Line < 0 || st.Offset < 0 || st.Offset > 0 && st.Line == 0 {
		return State{}, fmt.Errorf("%s is not an import state file", path)
	}
	if size >= 0 && st.Offset > size {
		return State{}, fmt.Errorf("%s records line %d at byte %d, but the file has %d bytes: is it the same file?",
			path, st.Line, st.Offset, size)
	}
	return st, nil
}

// save writes the state file atomically (a temporary file renamed over
// it), so that a crash leaves the old state or the new one.
func (im *Importer) save() error {
	c := &im.cfg
	if c.Check {
		return nil
	}
	im.state.UpdatedAt = c.Now().UTC()
	b, err := json.MarshalIndent(im.state, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.StatePath), filepath.Base(c.StatePath)+".tmp*")
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
	if err := os.Rename(tmp.Name(), c.StatePath); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("state file: %w", err)
	}
	im.unsaved, im.lastSaved = 0, c.Now()
	return nil
}
