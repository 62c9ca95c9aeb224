package batchjob

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
)

// Store is what a job needs from Qdrant; go-client's *qdrant.Client
// satisfies it.
type Store interface {
	Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error)
	Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error)
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
	UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error)
	Delete(ctx context.Context, req *qdrant.DeletePoints) (*qdrant.UpdateResult, error)
	CollectionExists(ctx context.Context, name string) (bool, error)
	CreateCollection(ctx context.Context, req *qdrant.CreateCollection) error
	DeleteCollection(ctx context.Context, name string) error
}

var _ Store = (*qdrant.Client)(nil)

// Suffix starts the name of a job's companion after the collection's name.
const Suffix = "_memrank_"

// Companion is the name of the collection that keeps job's checkpoint and
// originals for collection.
func Companion(collection, job string) string { return collection + Suffix + job }

// Defaults.
const (
	DefaultBatchSize = 256
	DefaultTimeout   = 10 * time.Second
	MaxBatchSize     = 5000 // a page asks for one point more; the embedded store answers at most 10,000
)

// Config says which collection a job runs over.
type Config struct {
	Collection string
	Job        string // names the companion: <Collection>_memrank_<Job>
	// BatchSize is the points per page; default DefaultBatchSize.
	BatchSize int
	// WithVectors reads the points' vectors with their payloads.
	WithVectors bool
	// Timeout bounds each store call; default DefaultTimeout.
	Timeout time.Duration
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Collection == "":
		return errors.New("batchjob: a collection is required")
	case c.Job == "":
		return errors.New("batchjob: a job name is required")
	case c.BatchSize < 0 || c.BatchSize > MaxBatchSize:
		return fmt.Errorf("batchjob: batch size %d: want 1 to %d", c.BatchSize, MaxBatchSize)
	case c.Timeout < 0:
		return fmt.Errorf("batchjob: timeout %s is negative", c.Timeout)
	}
	return nil
}

// Runner runs one job over one collection.
type Runner struct {
	store Store
	cfg   Config
}

// New returns a runner for cfg.
func New(store Store, cfg Config) (*Runner, error) {
	if store == nil {
		return nil, errors.New("batchjob: a store is required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Runner{store: store, cfg: cfg}, nil
}

// Companion is the runner's companion collection.
func (r *Runner) Companion() string { return Companion(r.cfg.Collection, r.cfg.Job) }

// Checkpoint is how far a run got.
type Checkpoint struct {
	Options  string          `json:"options"`  // what the run was started with; a resume must match
	Offset   string          `json:"offset"`   // the next page's first point id; "" at the start
	Pages    int             `json:"pages"`    // pages done
	Points   int             `json:"points"`   // points handed to the job
	Finished bool            `json:"finished"` // the last page was done
	State    json.RawMessage `json:"state"`    // the job's own state
}

// ErrOptions is a resume with other options than the interrupted run.
var ErrOptions = errors.New("batchjob: an interrupted run was started with other options")

// Page handles one page of points. redo is true for the first page after
// a resume: the interrupted run may have done part or all of it.
type Page func(ctx context.Context, pts []*qdrant.RetrievedPoint, redo bool) error

// Result says how a run went.
type Result struct {
	Resumed bool // an interrupted run was continued
	Points  int  // points handed to the job over the whole run (resumed ones included)
}

// Run pages through the collection from the checkpoint (or the start),
// handing each page to page and then moving the checkpoint past it, with
// state (a pointer the job's JSON state is read into on a resume and saved
// from after every page). A finished run is not resumed: Run starts a new
// pass. progress, when set, is called after each page with the points done.
func (r *Runner) Run(ctx context.Context, options string, state any, page Page, progress func(done int)) (Result, error) {
	if err := r.ensureCompanion(ctx); err != nil {
		return Result{}, err
	}
	cp, found, err := r.Checkpoint(ctx)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if found && !cp.Finished {
		if cp.Options != options {
			return res, fmt.Errorf("%w (%s); run it again with those options to finish it, or roll it back", ErrOptions, cp.Options)
		}
		if len(cp.State) > 0 {
			if err := json.Unmarshal(cp.State, state); err != nil {
				return res, fmt.Errorf("batchjob: read the state of %s: %w", r.Companion(), err)
			}
		}
		res.Resumed = true
	} else {
		// Saved at once, so that a run stopped on its first page resumes
		// (and the job's state, what it set up, is kept).
		cp = Checkpoint{Options: options}
		if cp.State, err = json.Marshal(state); err != nil {
			return res, fmt.Errorf("batchjob: encode the state: %w", err)
		}
		if err := r.saveCheckpoint(ctx, cp); err != nil {
			return res, err
		}
	}
	offset, err := parseOffset(cp.Offset)
	if err != nil {
		return res, err
	}
	redo := res.Resumed
	for {
		pts, next, err := r.page(ctx, offset, nil)
		if err != nil {
			return res, err
		}
		if len(pts) > 0 {
			if err := page(ctx, pts, redo); err != nil {
				return res, err
			}
		}
		redo = false
		cp.Pages++
		cp.Points += len(pts)
		cp.Finished = next == nil
		cp.Offset = idString(next)
		if cp.State, err = json.Marshal(state); err != nil {
			return res, fmt.Errorf("batchjob: encode the state: %w", err)
		}
		if err := r.saveCheckpoint(ctx, cp); err != nil {
			return res, err
		}
		res.Points = cp.Points
		if progress != nil {
			progress(cp.Points)
		}
		if next == nil {
			return res, nil
		}
		offset = next
	}
}

// Scan pages through the collection without a checkpoint: a dry run.
func (r *Runner) Scan(ctx context.Context, page Page, progress func(done int)) (int, error) {
	var offset *qdrant.PointId
	done := 0
	for {
		pts, next, err := r.page(ctx, offset, nil)
		if err != nil {
			return done, err
		}
		if len(pts) > 0 {
			if err := page(ctx, pts, false); err != nil {
				return done, err
			}
		}
		done += len(pts)
		if progress != nil {
			progress(done)
		}
		if next == nil {
			return done, nil
		}
		offset = next
	}
}

func (r *Runner) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.cfg.Timeout)
}

// page reads one page of coll (the collection when filter is nil) and the
// next page's offset (nil after the last). It asks for one point more than
// the page, which starts the next page: go-client's Scroll does not return
// Qdrant's next offset.
func (r *Runner) page(ctx context.Context, offset *qdrant.PointId, filter *qdrant.Filter) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error) {
	coll := r.cfg.Collection
	if filter != nil {
		coll = r.Companion()
	}
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	limit := uint32(r.cfg.BatchSize + 1)
	pts, err := r.store.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: coll, Offset: offset, Limit: &limit, Filter: filter,
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(r.cfg.WithVectors && filter == nil)})
	if err != nil {
		return nil, nil, fmt.Errorf("batchjob: read %s: %w", coll, err)
	}
	if len(pts) <= r.cfg.BatchSize {
		return pts, nil, nil
	}
	return pts[:r.cfg.BatchSize], pts[r.cfg.BatchSize].GetId(), nil
}

// Companion keys. The companion is memrank's own, so they are fixed.
const (
	keyKind    = "kind" // "checkpoint" or "original"
	keyJob     = "job"
	keyPointID = "point_id"
	keyPayload = "payload" // base64 of the protobuf qdrant.Struct of the original payload
	keyState   = "checkpoint"
)

func (r *Runner) checkpointID() *qdrant.PointId {
	return qdrant.NewID(memory.DeterministicID("batchjob-checkpoint", r.cfg.Collection, r.cfg.Job))
}

func (r *Runner) originalID(id *qdrant.PointId) *qdrant.PointId {
	return OriginalID(r.cfg.Collection, id)
}

// OriginalID is the id, in a job's companion, of the kept original of
// point id of collection: erasing a point erases its original with it.
func OriginalID(collection string, id *qdrant.PointId) *qdrant.PointId {
	return qdrant.NewID(memory.DeterministicID("batchjob-original", collection, idString(id)))
}

// ensureCompanion creates the companion (1-dimension vectors, like the
// audit companion) unless it exists.
func (r *Runner) ensureCompanion(ctx context.Context) error {
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	exists, err := r.store.CollectionExists(ctx, r.cfg.Collection)
	if err != nil {
		return fmt.Errorf("batchjob: look up collection %s: %w", r.cfg.Collection, err)
	}
	if !exists {
		return fmt.Errorf("batchjob: collection %s does not exist", r.cfg.Collection)
	}
	c := r.Companion()
	if exists, err = r.store.CollectionExists(ctx, c); err != nil {
		return fmt.Errorf("batchjob: look up collection %s: %w", c, err)
	}
	if exists {
		return nil
	}
	err = r.store.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: c,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 1, Distance: qdrant.Distance_Cosine})})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("batchjob: create collection %s: %w", c, err)
	}
	return nil
}

// Checkpoint reads the job's checkpoint; found is false when there is none
// (no run, or one rolled back).
func (r *Runner) Checkpoint(ctx context.Context) (cp Checkpoint, found bool, err error) {
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	pts, err := r.store.Get(ctx, &qdrant.GetPoints{CollectionName: r.Companion(), Ids: []*qdrant.PointId{r.checkpointID()},
		WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return cp, false, nil
		}
		return cp, false, fmt.Errorf("batchjob: read the checkpoint in %s: %w", r.Companion(), err)
	}
	if len(pts) == 0 {
		return cp, false, nil
	}
	if err := json.Unmarshal([]byte(pts[0].GetPayload()[keyState].GetStringValue()), &cp); err != nil {
		return cp, false, fmt.Errorf("batchjob: read the checkpoint in %s: %w", r.Companion(), err)
	}
	return cp, true, nil
}

func (r *Runner) saveCheckpoint(ctx context.Context, cp Checkpoint) error {
	b, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("batchjob: encode the checkpoint: %w", err)
	}
	return r.upsert(ctx, &qdrant.PointStruct{Id: r.checkpointID(), Vectors: qdrant.NewVectorsDense([]float32{1}),
		Payload: map[string]*qdrant.Value{keyKind: qdrant.NewValueString("checkpoint"), keyJob: qdrant.NewValueString(r.cfg.Job),
			keyState: qdrant.NewValueString(string(b))}})
}

func (r *Runner) upsert(ctx context.Context, pts ...*qdrant.PointStruct) error {
	if len(pts) == 0 {
		return nil
	}
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	wait := true
	if _, err := r.store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: r.Companion(), Wait: &wait, Points: pts}); err != nil {
		return fmt.Errorf("batchjob: write to %s: %w", r.Companion(), err)
	}
	return nil
}

// Keep stores the payloads of pts as their originals, before the job first
// writes to them. With onlyMissing, a point that already has an original
// keeps it (the job changed it before).
func (r *Runner) Keep(ctx context.Context, pts []*qdrant.RetrievedPoint, onlyMissing bool) error {
	if onlyMissing && len(pts) > 0 {
		ids := make([]*qdrant.PointId, len(pts))
		for i, p := range pts {
			ids[i] = p.GetId()
		}
		have, err := r.Originals(ctx, ids)
		if err != nil {
			return err
		}
		var missing []*qdrant.RetrievedPoint
		for _, p := range pts {
			if _, ok := have[idString(p.GetId())]; !ok {
				missing = append(missing, p)
			}
		}
		pts = missing
	}
	out := make([]*qdrant.PointStruct, 0, len(pts))
	for _, p := range pts {
		b, err := proto.Marshal(&qdrant.Struct{Fields: p.GetPayload()})
		if err != nil {
			return fmt.Errorf("batchjob: encode the payload of %s: %w", idString(p.GetId()), err)
		}
		out = append(out, &qdrant.PointStruct{Id: r.originalID(p.GetId()), Vectors: qdrant.NewVectorsDense([]float32{1}),
			Payload: map[string]*qdrant.Value{keyKind: qdrant.NewValueString("original"), keyJob: qdrant.NewValueString(r.cfg.Job),
				keyPointID: qdrant.NewValueString(idString(p.GetId())), keyPayload: qdrant.NewValueString(base64.StdEncoding.EncodeToString(b))}})
	}
	return r.upsert(ctx, out...)
}

// Originals returns the kept originals of ids, by id as a string ("42" or
// the UUID); ids without one are absent.
func (r *Runner) Originals(ctx context.Context, ids []*qdrant.PointId) (map[string]map[string]*qdrant.Value, error) {
	oids := make([]*qdrant.PointId, len(ids))
	for i, id := range ids {
		oids[i] = r.originalID(id)
	}
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	pts, err := r.store.Get(ctx, &qdrant.GetPoints{CollectionName: r.Companion(), Ids: oids, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return map[string]map[string]*qdrant.Value{}, nil
		}
		return nil, fmt.Errorf("batchjob: read originals in %s: %w", r.Companion(), err)
	}
	out := make(map[string]map[string]*qdrant.Value, len(pts))
	for _, p := range pts {
		id, payload, err := decodeOriginal(p.GetPayload())
		if err != nil {
			return nil, err
		}
		out[id] = payload
	}
	return out, nil
}

func decodeOriginal(p map[string]*qdrant.Value) (string, map[string]*qdrant.Value, error) {
	id := p[keyPointID].GetStringValue()
	b, err := base64.StdEncoding.DecodeString(p[keyPayload].GetStringValue())
	if err != nil {
		return id, nil, fmt.Errorf("batchjob: the original of %s is unreadable: %w", id, err)
	}
	var s qdrant.Struct
	if err := proto.Unmarshal(b, &s); err != nil {
		return id, nil, fmt.Errorf("batchjob: the original of %s is unreadable: %w", id, err)
	}
	if s.Fields == nil {
		s.Fields = map[string]*qdrant.Value{}
	}
	return id, s.Fields, nil
}

// Restored is one point a rollback wrote back: its id and original payload.
type Restored struct {
	ID      *qdrant.PointId
	Payload map[string]*qdrant.Value
}

// Rollback writes every kept original back over its point (the whole
// payload, so keys the job added go), page by page. After each page, undo
// (when set) removes what else the job wrote for those points, and then
// their originals are deleted, so an interrupted rollback resumes. It
// returns the points restored. The checkpoint stays: the caller reads its
// state, then calls Drop.
func (r *Runner) Rollback(ctx context.Context, undo func(ctx context.Context, done []Restored) error, progress func(done int)) (int, error) {
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(keyKind, "original")}}
	done := 0
	for {
		pts, next, err := r.page(ctx, nil, f)
		if err != nil {
			if status.Code(err) == codes.NotFound {
				return done, nil
			}
			return done, err
		}
		if len(pts) == 0 {
			return done, nil
		}
		if err := r.restore(ctx, pts, undo); err != nil {
			return done, err
		}
		done += len(pts)
		if progress != nil {
			progress(done)
		}
		if next == nil {
			return done, nil
		}
	}
}

func (r *Runner) restore(ctx context.Context, pts []*qdrant.RetrievedPoint, undo func(context.Context, []Restored) error) error {
	var ops []*qdrant.PointsUpdateOperation
	restored := make([]Restored, 0, len(pts))
	oids := make([]*qdrant.PointId, 0, len(pts))
	for _, p := range pts {
		sid, payload, err := decodeOriginal(p.GetPayload())
		if err != nil {
			return err
		}
		id, err := parseOffset(sid)
		if err != nil || id == nil {
			return fmt.Errorf("batchjob: the original %s names no point", idString(p.GetId()))
		}
		ops = append(ops, qdrant.NewPointsUpdateOverwritePayload(&qdrant.PointsUpdateOperation_OverwritePayload{
			Payload: payload, PointsSelector: qdrant.NewPointsSelector(id)}))
		restored = append(restored, Restored{ID: id, Payload: payload})
		oids = append(oids, p.GetId())
	}
	wctx, cancel := r.deadline(ctx)
	wait := true
	_, err := r.store.UpdateBatch(wctx, &qdrant.UpdateBatchPoints{CollectionName: r.cfg.Collection, Wait: &wait, Operations: ops})
	cancel()
	if err != nil {
		return fmt.Errorf("batchjob: restore points of %s: %w", r.cfg.Collection, err)
	}
	if undo != nil {
		if err := undo(ctx, restored); err != nil {
			return err
		}
	}
	return r.deleteIDs(ctx, oids)
}

func (r *Runner) deleteIDs(ctx context.Context, ids []*qdrant.PointId) error {
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	wait := true
	_, err := r.store.Delete(ctx, &qdrant.DeletePoints{CollectionName: r.Companion(), Wait: &wait,
		Points: qdrant.NewPointsSelector(ids...)})
	if err != nil {
		return fmt.Errorf("batchjob: delete from %s: %w", r.Companion(), err)
	}
	return nil
}

// Drop deletes the companion: the checkpoint and any originals left.
func (r *Runner) Drop(ctx context.Context) error {
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	if err := r.store.DeleteCollection(ctx, r.Companion()); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("batchjob: delete %s: %w", r.Companion(), err)
	}
	return nil
}

// idString is a point id as memrank shows it: the number in decimal, or the
// UUID; "" for nil.
func idString(id *qdrant.PointId) string { return qdrantjson.PointIDString(id) }

// parseOffset reads idString's form back; nil for "".
func parseOffset(s string) (*qdrant.PointId, error) {
	if s == "" {
		return nil, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return qdrant.NewIDNum(n), nil
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("batchjob: %q is not a point id", s)
	}
	return qdrant.NewID(u.String()), nil
}
