package rank

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
)

// spoolRecord is one point's unwritten total in the spool file.
type spoolRecord struct {
	Replica    string    `json:"replica"`
	Collection string    `json:"collection"`
	ID         string    `json:"id"`   // a decimal number or a UUID
	UUID       bool      `json:"uuid"` // how ID is written
	Total      int64     `json:"total"`
	Last       time.Time `json:"last"`
}

// spool writes what is still pending to the spool file, replacing it
// atomically (a temporary file, fsync, rename): on the next start the
// totals are flushed. Nothing to write removes the file.
func (r *Recorder) spool() (int, error) {
	path := r.cfg.SpoolFile
	r.mu.Lock()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	n := 0
	for k, e := range r.pending {
		rec := spoolRecord{Replica: r.cfg.ReplicaID, Collection: k.collection, Total: e.base + e.delta, Last: e.last}
		if u := e.id.GetUuid(); u != "" {
			rec.ID, rec.UUID = u, true
		} else {
			rec.ID = fmt.Sprint(e.id.GetNum())
		}
		if err := enc.Encode(rec); err != nil {
			r.mu.Unlock()
			return 0, err
		}
		n++
	}
	for _, line := range r.spoolForeign {
		b.Write(line)
		b.WriteByte('\n')
	}
	r.mu.Unlock()
	if b.Len() == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		return 0, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, err
	}
	// The rename is durable once the directory is.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return n, nil
}

// unspool loads the spool file's totals of this replica as pending, to be
// written by the next flush, and removes the file. Totals another replica
// id spooled are left out (and logged): written under this id they would
// be counted twice.
func (r *Recorder) unspool(ctx context.Context) error {
	f, err := os.Open(r.cfg.SpoolFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rank: access spool: %w", err)
	}
	defer f.Close()
	loaded, foreign := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	r.mu.Lock()
	for sc.Scan() {
		var rec spoolRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			continue // a torn line: the rename makes it unlikely
		}
		if rec.Replica != r.cfg.ReplicaID {
			// Kept in the file for the replica that wrote them.
			foreign++
			r.spoolForeign = append(r.spoolForeign, append([]byte(nil), sc.Bytes()...))
			continue
		}
		var id *qdrant.PointId
		if rec.UUID {
			if _, err := uuid.Parse(rec.ID); err != nil {
				continue
			}
			id = qdrant.NewID(rec.ID)
		} else {
			var n uint64
			if _, err := fmt.Sscan(rec.ID, &n); err != nil {
				continue
			}
			id = qdrant.NewIDNum(n)
		}
		key, _ := idKey(id)
		k := recKey{collection: rec.Collection, id: key}
		e := r.pending[k]
		if e == nil {
			e = &pendingEntry{id: id}
			r.pending[k] = e
		}
		e.base = max(e.base, rec.Total)
		if rec.Last.After(e.last) {
			e.last = rec.Last
		}
		loaded++
	}
	r.mu.Unlock()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("rank: access spool: %w", err)
	}
	if foreign > 0 {
		r.log.WarnContext(ctx, "access counts: spooled totals of another replica id left out", "points", foreign, "replica_id", r.cfg.ReplicaID)
	}
	if loaded > 0 {
		r.log.InfoContext(ctx, "access counts: spooled totals loaded; the next flush writes them", "points", loaded)
		// The file stays until a flush has written them: a crash before
		// that loses nothing.
		r.spoolLoaded = true
	}
	return nil
}

// spooled rewrites the spool file once a flush has written the totals it
// held: what remains in it is other replicas' (or nothing).
func (r *Recorder) spooled() {
	r.mu.Lock()
	loaded := r.spoolLoaded
	r.spoolLoaded = false
	foreign := r.spoolForeign
	r.mu.Unlock()
	if !loaded {
		return
	}
	var b bytes.Buffer
	for _, line := range foreign {
		b.Write(line)
		b.WriteByte('\n')
	}
	var err error
	if b.Len() == 0 {
		err = os.Remove(r.cfg.SpoolFile)
	} else {
		err = os.WriteFile(r.cfg.SpoolFile, b.Bytes(), 0o600)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Warn("access counts: spool file not cleared after its totals were written", "error", err)
	}
}
