package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
)

// Group commit. Every point write (a single update or an UpdateBatch) is a
// request queued to one committer goroutine per DB. The committer takes
// every request that queued up while its previous commit was being
// fsync'ed and runs them, in arrival order, in one bbolt transaction: one
// fsync for all of them. Each request keeps its own operation ids and its
// own outcome; a request whose operation fails is dropped and the rest are
// run again without it (bbolt has no savepoints), so it neither fails nor
// undoes the others. A request is acknowledged only once the shared commit
// is durable.
//
// Readers and the commit. A request made only of payload writes (set,
// overwrite, delete, clear payload) does not hold the collection's lock
// through the fsync. Just before the commit the collection gets an
// overlay: the committed (old) record of every point the group rewrites.
// Readers take a record from the overlay before bbolt, so between the
// commit and the in-memory apply they still see the old payload together
// with the old versions and index postings. The apply (postings, versions)
// and the removal of the overlay then happen together under one exclusive
// lock: a read sees a group's writes to a collection entirely or not at
// all. Writes that change vectors or point sets, and index definitions,
// hold the collection's lock from their first operation until after the
// commit.

// writeOp is one operation of a write request.
type writeOp struct {
	tx writeTx
	// payloadOnly: the operation rewrites payloads of existing points and
	// nothing else, so its in-memory apply can wait until after the commit.
	payloadOnly bool
	// byIDs: it selects its points by id, so its choice of points does not
	// depend on payload writes earlier in the group that memory does not
	// reflect yet. A payload write selecting by filter runs without the lock
	// only while no other payload write of the group is pending on the
	// collection.
	byIDs bool
}

// structural wraps an operation that changes vectors, point sets or index
// definitions.
func structural(tx writeTx) writeOp { return writeOp{tx: tx} }

const (
	reqQueued int32 = iota
	reqTaken
	reqAbandoned
)

// writeReq is one write request waiting for the committer.
type writeReq struct {
	ctx   context.Context
	name  string
	ops   []writeOp
	state atomic.Int32
	done  chan struct{}
	res   []*qdrant.UpdateResult
	err   error
}

func (r *writeReq) finish(res []*qdrant.UpdateResult, err error) {
	r.res, r.err = res, err
	close(r.done)
}

// committer owns the goroutine that runs write requests.
type committer struct {
	queue  chan *writeReq
	group  bool
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// afterCommit, when set (by tests, before the first write), runs
	// between a group's commit and its in-memory apply.
	afterCommit func()
	// Totals of the committed transactions (CommitStats).
	committed, pages, writes atomic.Uint64
	commitNanos              atomic.Int64
}

// CommitStats are totals over the transactions that committed point
// writes (upserts, deletes, payload and vector updates, batches) since
// Open; one transaction holds a group of writes. They show what a commit
// costs beside the disk's floor (CommitFloor, one page): bbolt rewrites
// every page on the path to each changed record, and writes and syncs each
// page on its own.
type CommitStats struct {
	Commits uint64 // transactions committed
	// Pages is the data pages they allocated (bbolt's page count), which
	// each commit writes; the meta page, written by every commit as well,
	// is not counted.
	Pages  uint64
	Writes uint64 // write calls they made to the file, the meta page's included
	// Time is spent in Commit: rebalancing and spilling nodes, growing the
	// file, writing the pages and, unless Options.NoSync, syncing.
	Time time.Duration
}

// CommitStats returns the totals so far; the difference of two calls
// describes the commits in between.
func (db *DB) CommitStats() CommitStats {
	cm := db.commits
	return CommitStats{Commits: cm.committed.Load(), Pages: cm.pages.Load(), Writes: cm.writes.Load(),
		Time: time.Duration(cm.commitNanos.Load())}
}

func (db *DB) startCommitter() {
	ctx, cancel := context.WithCancel(context.Background())
	cm := &committer{queue: make(chan *writeReq, db.opts.MaxQueuedWrites), group: !db.opts.NoGroupCommit, cancel: cancel}
	db.commits = cm
	cm.wg.Add(1)
	go func() {
		defer cm.wg.Done()
		db.commitLoop(ctx, cm)
	}()
}

// stop ends the committer. Close calls it once no operation is in flight,
// so the queue is empty.
func (cm *committer) stop() {
	cm.cancel()
	cm.wg.Wait()
}

func (db *DB) commitLoop(ctx context.Context, cm *committer) {
	limit := cap(cm.queue)
	for {
		var first *writeReq
		select {
		case <-ctx.Done():
			return
		case first = <-cm.queue:
		}
		reqs := []*writeReq{first}
	drain:
		for cm.group && len(reqs) < limit {
			select {
			case r := <-cm.queue:
				reqs = append(reqs, r)
			default:
				break drain
			}
		}
		db.commitGroup(reqs)
	}
}

// submit queues a write request and waits for its outcome. A caller whose
// context ends while the request still waits in the queue gets Canceled
// and the request is never applied; once the committer has taken it, the
// caller waits for that commit (one fsync) and gets its true outcome, so a
// write that is reported as failed never shows up later. Qdrant gives no
// stronger promise: an update that reached its WAL is applied whether or
// not the client is still there.
func (db *DB) submit(ctx context.Context, name string, ops []writeOp) ([]*qdrant.UpdateResult, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return nil, canceled(err)
	}
	r := &writeReq{ctx: ctx, name: name, ops: ops, done: make(chan struct{})}
	select {
	case db.commits.queue <- r:
	case <-ctx.Done():
		return nil, canceled(ctx.Err())
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqQueued, reqAbandoned) {
			return nil, canceled(ctx.Err())
		}
		<-r.done
	}
	return r.res, r.err
}

func canceled(err error) *Error { return &Error{Kind: KindCanceled, Msg: err.Error(), Err: err} }

// commitGroup runs requests in shared transactions, dropping failed ones
// and running the rest again until every request has its outcome.
func (db *DB) commitGroup(reqs []*writeReq) {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	live := make([]*writeReq, 0, len(reqs))
	for _, r := range reqs {
		if !r.state.CompareAndSwap(reqQueued, reqTaken) {
			continue // its caller gave up; it was never applied
		}
		if err := r.ctx.Err(); err != nil {
			r.finish(nil, canceled(err))
			continue
		}
		live = append(live, r)
	}
	payloadFirst(live)
	// After a failure the requests that ran before it commit on their own
	// first, so each request runs at most about twice, however many fail.
	limit := len(live)
	for len(live) > 0 {
		n, failed, err := db.tryGroup(live[:min(limit, len(live))])
		limit = len(live)
		switch {
		case failed >= 0:
			live[failed].finish(nil, err)
			live = append(live[:failed], live[failed+1:]...)
			if failed > 0 {
				limit = failed
			}
		case err != nil:
			for _, r := range live[:n] {
				r.finish(nil, err)
			}
			live = live[n:]
		default:
			for _, r := range live[:n] {
				r.finish(r.res, nil)
			}
			live = live[n:]
		}
	}
}

// payloadFirst moves the requests made only of payload writes ahead of
// the others, keeping each kind in arrival order. None of them has been
// acknowledged, so any order is one the callers could have seen. It
// matters when one fails: a payload write changes memory only after the
// commit, so rolling back the ones before it undoes nothing, while a
// failure after a write that changed a collection's memory under its lock
// (an upsert, a delete) makes that collection reload from disk, a scan of
// all its points. With payload writes first, the likeliest failure (the
// access flush's set_payload on a point deleted meanwhile) comes before any
// such write.
func payloadFirst(reqs []*writeReq) {
	slices.SortStableFunc(reqs, func(a, b *writeReq) int {
		pa, pb := payloadOnly(a.ops), payloadOnly(b.ops)
		switch {
		case pa == pb:
			return 0
		case pa:
			return -1
		}
		return 1
	})
}

func payloadOnly(ops []writeOp) bool {
	for _, op := range ops {
		if !op.payloadOnly {
			return false
		}
	}
	return true
}

// colState is what a group did to one collection.
type colState struct {
	c         *collection
	seq       uint64 // last operation id given out
	exclusive bool   // c.mu held; memory applied as operations run
	dirty     bool   // memory changed ahead of the commit (under c.mu)
	applies   []func()
	overlay   map[PointID][]byte
}

// txGroup is one attempt at committing a group.
type txGroup struct {
	db   *DB
	tx   *bolt.Tx
	cols []*colState
}

// tryGroup runs requests in one transaction and commits it. It returns
// how many requests, from the first, the commit covered (with the commit's
// error or nil); or, when one failed and the transaction was rolled back,
// the index of that request and its error.
func (db *DB) tryGroup(reqs []*writeReq) (n, failed int, err error) {
	tx, err := db.bolt.Begin(true)
	if err != nil {
		return len(reqs), -1, internal(err, "begin write")
	}
	g := &txGroup{db: db, tx: tx}
	defer g.unlock()
	n = len(reqs)
	for i, r := range reqs {
		res, err := g.runGuarded(r)
		if errors.Is(err, errSplit) {
			n = i // the next group starts with it
			break
		}
		if err != nil {
			_ = tx.Rollback()
			if rerr := g.undo(); rerr != nil {
				return len(reqs), -1, internal(errors.Join(err, rerr), "roll back write to collection %s", r.name)
			}
			var e *Error
			if !errors.As(err, &e) {
				e = internal(err, "write to collection %s", r.name)
			}
			return 0, i, e
		}
		r.res = res
	}
	for _, cs := range g.cols {
		b := tx.Bucket(bucketCollections).Bucket([]byte(cs.c.name))
		if err := putSeq(b, cs.seq); err != nil {
			_ = tx.Rollback()
			return n, -1, internal(errors.Join(err, g.undo()), "write to collection %s", cs.c.name)
		}
	}
	g.publish()
	start := time.Now()
	if err := tx.Commit(); err != nil {
		g.withdraw()
		return n, -1, internal(errors.Join(err, g.undo()), "commit")
	}
	cm := db.commits
	cm.commitNanos.Add(int64(time.Since(start)))
	st := tx.Stats()
	cm.committed.Add(1)
	cm.pages.Add(uint64(max(st.GetPageCount(), 0)))
	cm.writes.Add(uint64(max(st.GetWrite(), 0)))
	if h := db.commits.afterCommit; h != nil {
		h()
	}
	g.apply()
	return n, -1, nil
}

// errSplit stops a group before a request that would have to lock a
// collection on which the group has payload writes pending without the
// lock: committed apart, those keep the collection's readers running
// through their fsync.
var errSplit = errors.New("store: next group")

// shared reports whether op may run without the collection's lock, given
// whether the group already has payload writes pending on it.
func (op writeOp) shared(pending bool) bool {
	return op.payloadOnly && (op.byIDs || !pending)
}

// needsLock reports whether ops, run after pending unlocked payload writes
// on their collection, would have to lock it.
func needsLock(ops []writeOp) bool {
	for _, op := range ops {
		if !op.shared(true) {
			return true
		}
	}
	return false
}

// state returns the group's state for c, starting it if needed.
func (g *txGroup) state(c *collection) *colState {
	for _, cs := range g.cols {
		if cs.c == c {
			return cs
		}
	}
	cs := &colState{c: c, seq: c.seq}
	g.cols = append(g.cols, cs)
	return cs
}

// runGuarded is run with a panic turned into the request's failure: the
// committer goroutine serves every writer, so a bug met by one write must
// not take the process (and every collection's lock) down with it. Memory
// the panicking write may have half changed is reloaded by the failure
// path, as after any failed write.
func (g *txGroup) runGuarded(r *writeReq) (res []*qdrant.UpdateResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			for _, cs := range g.cols {
				cs.c.stage = nil
				if cs.exclusive {
					cs.dirty = true
				}
			}
			// The panic's text stays out of the answer (it may show
			// internals); Err keeps it for whoever logs the error.
			res, err = nil, &Error{Kind: KindInternal, Msg: "Service internal error: write to collection " + r.name + " failed",
				Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return g.run(r)
}

// run runs one request's operations in the group's transaction.
func (g *txGroup) run(r *writeReq) ([]*qdrant.UpdateResult, error) {
	c, err := g.db.collection(r.name)
	if err != nil {
		return nil, err
	}
	b := g.tx.Bucket(bucketCollections).Bucket([]byte(c.name))
	if b == nil || c.dropped {
		return nil, collectionNotFound(r.name)
	}
	pts := b.Bucket(bucketPoints)
	cs := g.state(c)
	if !cs.exclusive && len(cs.applies) > 0 && needsLock(r.ops) {
		return nil, errSplit
	}
	out := make([]*qdrant.UpdateResult, len(r.ops))
	for i, op := range r.ops {
		if err := r.ctx.Err(); err != nil {
			return nil, canceled(err)
		}
		shared := !cs.exclusive && op.shared(len(cs.applies) > 0)
		if !shared && !cs.exclusive {
			cs.lock()
		}
		if shared && cs.overlay == nil {
			cs.overlay = map[PointID][]byte{}
		}
		if shared {
			c.stage = cs.overlay
		}
		cs.seq++
		apply, err := op.tx(r.ctx, c, pts, cs.seq)
		c.stage = nil
		if err != nil {
			return nil, err
		}
		switch {
		case apply == nil:
		case cs.exclusive:
			apply()
			cs.dirty = true
		default:
			cs.applies = append(cs.applies, apply)
		}
		out[i] = &qdrant.UpdateResult{OperationId: proto.Uint64(cs.seq), Status: qdrant.UpdateStatus_Completed}
	}
	return out, nil
}

// lock takes the collection exclusively for the rest of the group and
// brings memory up to the transaction: the payload writes run so far
// without the lock are applied now.
func (cs *colState) lock() {
	cs.c.mu.Lock()
	cs.exclusive = true
	for _, f := range cs.applies {
		f()
		cs.dirty = true
	}
	cs.applies, cs.overlay = nil, nil
}

// publish installs the overlays of the collections written without their
// lock: from here on readers take those points' records from the overlay,
// so the commit does not change what they see. It takes no lock: a reader
// reads the overlay only after beginning its bbolt transaction, and one
// that began after the commit (so sees the new records) is ordered after
// this store by bbolt's meta lock.
func (g *txGroup) publish() {
	for _, cs := range g.cols {
		if cs.exclusive || len(cs.overlay) == 0 {
			continue
		}
		cs.c.overlay.Store(&cs.overlay)
	}
}

// withdraw removes the overlays after a failed commit: disk is as it was,
// so readers see the same records with or without them.
func (g *txGroup) withdraw() {
	for _, cs := range g.cols {
		if !cs.exclusive {
			cs.c.overlay.Store(nil)
		}
	}
}

// apply makes a committed group visible: for each collection written
// without its lock, the postings, versions and operation counter change
// and the overlay goes in one exclusive section.
func (g *txGroup) apply() {
	for _, cs := range g.cols {
		if cs.exclusive {
			cs.c.seq = cs.seq
			continue
		}
		cs.c.mu.Lock()
		for _, f := range cs.applies {
			f()
		}
		cs.c.seq = cs.seq
		cs.c.overlay.Store(nil)
		cs.c.mu.Unlock()
	}
}

// undo returns memory to what disk holds after a rollback: collections
// changed under their lock are reloaded; the others were not touched.
func (g *txGroup) undo() error {
	var errs []error
	for _, cs := range g.cols {
		if cs.exclusive && cs.dirty {
			if err := g.db.reloadCollection(cs.c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// unlock releases the collections the group locked.
func (g *txGroup) unlock() {
	for _, cs := range g.cols {
		if cs.exclusive {
			cs.c.mu.Unlock()
			cs.exclusive = false
		}
	}
	g.cols = nil
}

// stageOld records, for a payload write running without the collection's
// lock, the committed record of a point it is about to rewrite. Only the
// first write of a group to a point records it: later ones see that
// write's uncommitted record.
func (c *collection) stageOld(id PointID, raw []byte) {
	if c.stage == nil {
		return
	}
	if _, ok := c.stage[id]; !ok {
		c.stage[id] = bytes.Clone(raw)
	}
}

// record returns a point's record as readers must see it: from the
// overlay while a payload write to it is being committed, else from bbolt.
// The caller holds c.mu (shared or exclusive) and began the transaction of
// pts before calling.
func (c *collection) record(pts *bolt.Bucket, id PointID) []byte {
	if ov := c.overlay.Load(); ov != nil {
		if raw, ok := (*ov)[id]; ok {
			return raw
		}
	}
	return pts.Get(id.key())
}

// payloadOf decodes a point's payload as readers must see it (see
// record); nil if the point is not stored.
func (c *collection) payloadOf(pts *bolt.Bucket, id PointID) (map[string]*qdrant.Value, error) {
	b, err := c.storedPayload(pts, id)
	if b == nil || err != nil {
		return nil, err
	}
	return decodePayload(b)
}

// storedPayload is a point's encoded payload as readers must see it (see
// record), valid for the read transaction only; nil if the point is not
// stored.
func (c *collection) storedPayload(pts *bolt.Bucket, id PointID) ([]byte, error) {
	raw := c.record(pts, id)
	if raw == nil {
		return nil, nil
	}
	rec, err := parseRecord(raw, c.dim)
	if err != nil {
		return nil, err
	}
	return rec.payload, nil
}

// current returns the record to use for a point met by a cursor (v is what
// the cursor read).
func (c *collection) current(id PointID, v []byte) []byte {
	if ov := c.overlay.Load(); ov != nil {
		if raw, ok := (*ov)[id]; ok {
			return raw
		}
	}
	return v
}
