package consolidate_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/tenancy"
)

// setState stores tier and retrievable on a memory as another writer
// would: no audit record, no token.
func (h *harness) setState(t testing.TB, id string, tier scoring.Tier, retrievable bool) {
	t.Helper()
	wait := true
	if _, err := h.client.SetPayload(context.Background(), &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
		PointsSelector: qdrant.NewPointsSelector(qdrant.NewID(id)),
		Payload: map[string]*qdrant.Value{h.codec.Key(memory.FieldTier): qdrant.NewValueString(tier.String()),
			h.codec.Key(memory.FieldRetrievable): qdrant.NewValueBool(retrievable)}}); err != nil {
		t.Fatal(err)
	}
}

// oldRecord is an audit record as an earlier memrank wrote it: reason
// "tier" or "archive" (consolidation's auditPoint) with the transition's
// tiers and retrievable flags, or "backfill" (the backfill's, without
// them). tenant, when set, is the tenancy key's value.
type oldRecord struct {
	memory, reason    string
	oldTier           scoring.Tier
	oldRetr, newRetr  bool
	written           time.Time
	tenantKey, tenant string
	recordID          string
}

// writeOld writes the record into the companion and returns its id.
func (h *harness) writeOld(t testing.TB, r oldRecord) string {
	t.Helper()
	if r.recordID == "" {
		r.recordID = memory.DeterministicID("old", r.memory, r.reason, r.written.String())
	}
	p := map[string]*qdrant.Value{
		"kind":           qdrant.NewValueString("audit"),
		"memory_id":      qdrant.NewValueString(r.memory),
		"observation_id": qdrant.NewValueString(""),
		"reason":         qdrant.NewValueString(r.reason),
		"old":            qdrant.NewValueDouble(0.8),
		"new":            qdrant.NewValueDouble(0.8),
		"old_n":          qdrant.NewValueInt(1),
		"new_n":          qdrant.NewValueInt(1),
		"at":             qdrant.NewValueString(memory.FormatTime(r.written)),
		"session_id":     qdrant.NewValueString(""),
		"turn_id":        qdrant.NewValueString(""),
		"grounding":      qdrant.NewValueString(""),
		"related":        qdrant.NewValueString(""),
		"seq":            qdrant.NewValueInt(0),
		"collection":     qdrant.NewValueString("mem"),
		"written_at_ns":  qdrant.NewValueInt(r.written.UnixNano()),
	}
	switch r.reason {
	case "backfill":
		p["decision"] = qdrant.NewValueString("backfilled")
	default:
		p["decision"] = qdrant.NewValueString(map[string]string{"tier": "consolidated", "archive": "reviewed"}[r.reason])
		p["old_tier"] = qdrant.NewValueString(r.oldTier.String())
		p["new_tier"] = qdrant.NewValueString("archived")
		p["old_retrievable"] = qdrant.NewValueBool(r.oldRetr)
		p["new_retrievable"] = qdrant.NewValueBool(r.newRetr)
	}
	if r.tenantKey != "" {
		p[r.tenantKey] = qdrant.NewValueString(r.tenant)
	}
	wait := true
	if _, err := h.client.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: "mem" + memory.AuditSuffix, Wait: &wait,
		Points: []*qdrant.PointStruct{{Id: qdrant.NewID(r.recordID), Vectors: qdrant.NewVectorsDense([]float32{1}), Payload: p}}}); err != nil {
		t.Fatal(err)
	}
	return r.recordID
}

// ageArchive leaves memory id as an earlier consolidation left a memory
// it archived for age: tier archived, retrievable false, the transition's
// token, and its audit record (reason "tier", retrievable true -> false).
func (h *harness) ageArchive(t testing.TB, id string, written time.Time) string {
	t.Helper()
	rec := h.writeOld(t, oldRecord{memory: id, reason: "tier", oldTier: scoring.TierActive, oldRetr: true, written: written})
	h.setState(t, id, scoring.TierArchived, false)
	wait := true
	if _, err := h.client.SetPayload(context.Background(), &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
		PointsSelector: qdrant.NewPointsSelector(qdrant.NewID(id)),
		Payload:        map[string]*qdrant.Value{"memrank_tier_change": qdrant.NewValueString(rec)}}); err != nil {
		t.Fatal(err)
	}
	return rec
}

// liftRecords are the payloads of the lift records of memory id.
func (h *harness) liftRecords(t testing.TB, id string) []map[string]*qdrant.Value {
	t.Helper()
	return h.records(t, "age_archive_lifted", id)
}

// records are the payloads of the audit records of reason (of memory id,
// unless id is "").
func (h *harness) records(t testing.TB, reason, id string) []map[string]*qdrant.Value {
	t.Helper()
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("reason", reason)}}
	if id != "" {
		f.Must = append(f.Must, qdrant.NewMatchKeyword("memory_id", id))
	}
	limit := uint32(10000)
	pts, err := h.client.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: "mem" + memory.AuditSuffix,
		Filter: f, Limit: &limit, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]*qdrant.Value, len(pts))
	for i, p := range pts {
		out[i] = p.GetPayload()
	}
	return out
}

// Memories an earlier version took out of answers for age are made
// retrievable again, with their tier label and one audit record; what a
// reviewer archived, and what another writer took out, stays out. A dry
// run reports the lifts and writes nothing; a second run writes nothing.
func TestLiftEarlierAgeArchives(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	years := func(n int) time.Time { return t0.Add(-time.Duration(n) * 365 * 24 * time.Hour) }
	obs := func(i int, at time.Time) string {
		return h.observe(t, dedup.Observation{Text: text(i), Source: scoring.SourceDirect, SessionID: "s", ObservedAt: at}).MemoryID
	}
	var (
		age        = obs(1, years(3))                  // an old consolidation's age archive
		ageRecent  = obs(2, t0.Add(-100*24*time.Hour)) // archived for age then; its label now is not archived
		backfilled = obs(3, years(2))                  // an old backfill's age archive
		reviewed   = obs(4, years(3))                  // a reviewer's archive
		reviewAge  = obs(5, years(3))                  // age-archived, then archived by a reviewer
		noRecord   = obs(6, years(3))                  // another writer's archived, retrievable false
		excluded   = obs(7, t0.Add(-time.Hour))        // another writer's retrievable false on an active memory
		later      = obs(8, years(3))                  // lifted, then taken out by another writer
		fresh      = obs(9, t0.Add(-24*time.Hour))     // never archived
		revived    = obs(10, years(3))                 // age-archived, revived by the write path, then taken out by another writer
	)
	// Audit records are ordered by the real time they were written.
	realNow := time.Now()
	job := h.job(t, consolidate.Config{}, "r1")
	ageRec := h.ageArchive(t, age, realNow.Add(-3*time.Hour))
	ageRecentRec := h.ageArchive(t, ageRecent, realNow.Add(-3*time.Hour))
	later1 := h.ageArchive(t, later, realNow.Add(-3*time.Hour))
	h.ageArchive(t, revived, realNow.Add(-3*time.Hour))
	h.writeOld(t, oldRecord{memory: revived, reason: "independent", written: realNow.Add(-2 * time.Hour)})
	h.setState(t, revived, scoring.TierArchived, false)
	backfillRec := h.writeOld(t, oldRecord{memory: backfilled, reason: "backfill", written: realNow.Add(-4 * time.Hour)})
	h.setState(t, backfilled, scoring.TierArchived, false)
	if out, err := job.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: reviewed}); err != nil || !out.Archived {
		t.Fatalf("reviewer's archive: %+v, %v", out, err)
	}
	h.ageArchive(t, reviewAge, realNow.Add(-3*time.Hour))
	// A reviewer archives a memory an earlier version archived for age:
	// nothing changes in it, but the archive is recorded, so it stays.
	if out, err := job.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: reviewAge}); err != nil || !out.Archived || out.From != "archived" {
		t.Fatalf("reviewer's archive of an age archive: %+v, %v; want archived (recorded)", out, err)
	}
	if again, err := job.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: reviewAge}); err != nil || again.Archived {
		t.Errorf("second archive: %+v, %v; want nothing changed", again, err)
	}
	h.setState(t, noRecord, scoring.TierArchived, false)
	h.setState(t, excluded, scoring.TierActive, false)
	state := func(id string) (scoring.Tier, bool) {
		m, _ := h.get(t, id)
		return m.Tier, m.Retrievable
	}
	labelNow := func(id string) scoring.Tier {
		m, _ := h.get(t, id)
		tier, _ := h.expected(&m, t0)
		return tier
	}

	dry, err := job.Run(ctx, consolidate.Request{Collection: "mem", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Lifted != 4 {
		t.Errorf("dry run: %d lifts, want 4 (age, ageRecent, backfilled, later)", dry.Lifted)
	}
	for _, id := range []string{age, ageRecent, backfilled, later} {
		if tier, retr := state(id); tier != scoring.TierArchived || retr || len(h.liftRecords(t, id)) != 0 {
			t.Errorf("%s after the dry run: %s/%v, %d lift records; want it untouched", id, tier, retr, len(h.liftRecords(t, id)))
		}
	}

	rep, err := job.Run(ctx, consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lifted != dry.Lifted || rep.Conflicts != 0 {
		t.Errorf("run: %d lifts, %d conflicts; the dry run said %d", rep.Lifted, rep.Conflicts, dry.Lifted)
	}
	for _, tc := range []struct {
		name    string
		id      string
		archive string // the age archive's record, for a lifted memory
	}{
		{"an old consolidation's age archive", age, ageRec},
		{"an age archive whose label is no longer archived", ageRecent, ageRecentRec},
		{"an old backfill's age archive", backfilled, backfillRec},
		{"an age archive taken out again later", later, later1},
	} {
		t.Run("lifted: "+tc.name, func(t *testing.T) {
			tier, retr := state(tc.id)
			if want := labelNow(tc.id); tier != want || !retr {
				t.Errorf("stored %s/%v, want the label %s, retrievable", tier, retr, want)
			}
			recs := h.liftRecords(t, tc.id)
			if len(recs) != 1 {
				t.Fatalf("%d lift records, want 1", len(recs))
			}
			r := recs[0]
			if r["decision"].GetStringValue() != "consolidated" || r["old_tier"].GetStringValue() != "archived" ||
				r["new_tier"].GetStringValue() != tier.String() || r["old_retrievable"].GetBoolValue() ||
				!r["new_retrievable"].GetBoolValue() || r["age_archive"].GetStringValue() != tc.archive {
				t.Errorf("lift record %v", r)
			}
			view, err := h.eng.Memory(ctx, "mem", "", tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if last := view.Audit[len(view.Audit)-1]; last.Reason != "age_archive_lifted" || last.NewTier != tier.String() {
				t.Errorf("the trail ends with %+v, want the lift", last)
			}
		})
	}
	if got := labelNow(ageRecent); got == scoring.TierArchived {
		t.Errorf("ageRecent's label is %s: the test wants one that is not archived", got)
	}
	for _, tc := range []struct {
		name string
		id   string
	}{
		{"a reviewer's archive", reviewed},
		{"an age archive a reviewer archived again", reviewAge},
		{"retrievable false without a record", noRecord},
		{"another writer's exclusion, labelled", excluded},
		{"another writer's exclusion after the write path revived an age archive", revived},
	} {
		t.Run("kept: "+tc.name, func(t *testing.T) {
			if tier, retr := state(tc.id); tier != scoring.TierArchived || retr {
				t.Errorf("stored %s/%v, want archived/false", tier, retr)
			}
			if n := len(h.liftRecords(t, tc.id)); n != 0 {
				t.Errorf("%d lift records", n)
			}
		})
	}
	if tier, retr := state(fresh); tier != scoring.TierActive || !retr {
		t.Errorf("fresh: %s/%v", tier, retr)
	}

	// Taken out by another writer after the lift: the latest record is the
	// lift, so the trail does not say age; it stays out.
	h.setState(t, later, scoring.TierArchived, false)
	again, err := job.Run(ctx, consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Lifted != 0 || again.Written != 0 || again.Audited != 0 {
		t.Errorf("second run: %+v; want nothing written", again)
	}
	if tier, retr := state(later); tier != scoring.TierArchived || retr || len(h.liftRecords(t, later)) != 1 {
		t.Errorf("later: %s/%v with %d lift records; want it left out, lifted once", tier, retr, len(h.liftRecords(t, later)))
	}
	if tier, retr := state(excluded); tier != scoring.TierArchived || retr {
		t.Errorf("excluded after its labelling record: %s/%v", tier, retr)
	}
}

// tenantHarness is a harness whose write path and job scope by user_id.
func tenantHarness(t *testing.T) (*harness, *tenancy.Policy, *consolidate.Job) {
	t.Helper()
	h := newHarness(t)
	policy := &tenancy.Policy{Key: "user_id", Header: "x-tenant"}
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	if h.eng, err = dedup.New(h.client, dedup.Config{Codec: h.codec, Embedder: emb, Tenancy: policy, Now: h.clock.Now}); err != nil {
		t.Fatal(err)
	}
	cfg := consolidate.DefaultConfig()
	cfg.Rate = 0
	j, err := consolidate.New(h.client, consolidate.Options{Config: cfg, Codec: h.codec, Tenancy: policy, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return h, policy, j
}

// A tenant's run lifts only the tenant's memories and decides from the
// tenant's records only; a record naming another tenant is no part of a
// memory's trail, in the operator's run either.
func TestLiftIsTenantScoped(t *testing.T) {
	h, policy, _ := tenantHarness(t)
	st := &scrollRecorder{Client: h.client}
	cfg := consolidate.DefaultConfig()
	cfg.Rate = 0
	j, err := consolidate.New(st, consolidate.Options{Config: cfg, Codec: h.codec, Tenancy: policy, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old := t0.Add(-3 * 365 * 24 * time.Hour)
	realNow := time.Now()
	ids := map[string]string{}
	for _, tenant := range []string{"alice", "bob"} {
		ids[tenant] = h.observe(t, dedup.Observation{Tenant: tenant, Text: text(1), Source: scoring.SourceDirect, ObservedAt: old}).MemoryID
		h.writeOld(t, oldRecord{memory: ids[tenant], reason: "tier", oldTier: scoring.TierActive, oldRetr: true,
			written: realNow.Add(-time.Hour), tenantKey: policy.Key, tenant: tenant})
		h.setState(t, ids[tenant], scoring.TierArchived, false)
	}
	// carol's memory was archived by her reviewer; a later age record that
	// names another tenant is not carol's.
	carol := h.observe(t, dedup.Observation{Tenant: "carol", Text: text(2), Source: scoring.SourceDirect, ObservedAt: old}).MemoryID
	if out, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", Tenant: "carol", ID: carol}); err != nil || !out.Archived {
		t.Fatalf("carol's archive: %+v, %v", out, err)
	}
	h.writeOld(t, oldRecord{memory: carol, reason: "tier", oldTier: scoring.TierActive, oldRetr: true,
		written: realNow.Add(time.Hour), tenantKey: policy.Key, tenant: "alice"})

	rep, err := j.Run(ctx, consolidate.Request{Collection: "mem", Tenant: "alice"})
	if err != nil || rep.Memories != 1 || rep.Lifted != 1 {
		t.Fatalf("alice's run: %+v, %v; want alice's one memory lifted", rep, err)
	}
	if m, _ := h.get(t, ids["alice"]); !m.Retrievable {
		t.Errorf("alice's memory not lifted")
	}
	if m, _ := h.get(t, ids["bob"]); m.Retrievable || len(h.liftRecords(t, ids["bob"])) != 0 {
		t.Errorf("alice's run lifted bob's memory")
	}
	if recs := h.liftRecords(t, ids["alice"]); len(recs) != 1 || recs[0]["user_id"].GetStringValue() != "alice" {
		t.Errorf("alice's lift records %v: want one, alice's", recs)
	}
	// Alice's run read only alice's records (the heartbeats are the
	// replicas', read by kind).
	st.mu.Lock()
	trails := 0
	for _, r := range st.reads {
		byID, scoped := false, false
		for _, c := range r.GetFilter().GetMust() {
			byID = byID || c.GetField().GetKey() == "memory_id"
			scoped = scoped || c.GetField().GetKey() == policy.Key && c.GetField().GetMatch().GetKeyword() == "alice"
		}
		if byID {
			trails++
		}
		if byID && !scoped {
			t.Errorf("alice's run read the trail with %v: not scoped to alice", r.GetFilter())
		}
	}
	st.mu.Unlock()
	if trails == 0 {
		t.Error("alice's run did not read the trail")
	}
	for _, tenant := range []string{"bob", "carol"} {
		rep, err := j.Run(ctx, consolidate.Request{Collection: "mem", Tenant: tenant})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"bob": 1, "carol": 0}[tenant]; rep.Lifted != want {
			t.Errorf("%s's run lifted %d, want %d", tenant, rep.Lifted, want)
		}
	}
	rep, err = j.Run(ctx, consolidate.Request{Collection: "mem", Operator: true})
	if err != nil || rep.Lifted != 0 || rep.Written != 0 {
		t.Errorf("operator's run: %+v, %v; want nothing left to lift", rep, err)
	}
	if m, _ := h.get(t, carol); m.Retrievable {
		t.Errorf("carol's reviewed archive was lifted on another tenant's record")
	}
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem"}); !errors.Is(err, consolidate.ErrInput) {
		t.Errorf("run without a tenant: %v, want ErrInput", err)
	}
}

// scrollRecorder is the job's store, recording its reads of the companion.
type scrollRecorder struct {
	*qdrant.Client
	mu    sync.Mutex
	reads []*qdrant.ScrollPoints
}

func (s *scrollRecorder) ScrollAndOffset(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error) {
	if req.GetCollectionName() == "mem"+memory.AuditSuffix {
		s.mu.Lock()
		s.reads = append(s.reads, req)
		s.mu.Unlock()
	}
	return s.Client.ScrollAndOffset(ctx, req)
}

// trailReads are the recorded reads by memory_id, with their ids.
func (s *scrollRecorder) trailReads() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]string
	for _, r := range s.reads {
		for _, c := range r.GetFilter().GetMust() {
			if f := c.GetField(); f.GetKey() == "memory_id" {
				out = append(out, f.GetMatch().GetKeywords().GetStrings())
			}
		}
	}
	return out
}

// The lift reads audit records only for its candidates, by memory_id, a
// page's candidates at a time; a collection without candidates costs no
// read of the trail.
func TestLiftReadsTheTrailOfItsCandidatesOnly(t *testing.T) {
	h := newHarness(t)
	ids := h.seed(t, 30)
	st := &scrollRecorder{Client: h.client}
	cfg := consolidate.DefaultConfig()
	cfg.Rate, cfg.BatchSize = 0, 8
	j, err := consolidate.New(st, consolidate.Options{Config: cfg, Codec: h.codec, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem"}); err != nil {
		t.Fatal(err)
	}
	if reads := st.trailReads(); len(reads) != 0 {
		t.Errorf("no candidates, yet %d reads of the trail", len(reads))
	}
	// Archived for age after the first run's records: the latest.
	var cands []string
	for i := 0; i < len(ids); i += 3 {
		h.ageArchive(t, ids[i], time.Now())
		cands = append(cands, ids[i])
	}
	rep, err := j.Run(ctx, consolidate.Request{Collection: "mem"})
	if err != nil || rep.Lifted != len(cands) {
		t.Fatalf("run: %+v, %v; want %d lifted", rep, err, len(cands))
	}
	var read []string
	for _, r := range st.trailReads() {
		if len(r) > cfg.BatchSize {
			t.Errorf("one read names %d memories, more than a batch (%d)", len(r), cfg.BatchSize)
		}
		read = append(read, r...)
	}
	slices.Sort(read)
	slices.Sort(cands)
	if read = slices.Compact(read); !slices.Equal(read, cands) {
		t.Errorf("the trail was read for %v, want the candidates %v", read, cands)
	}
}

// Two replicas lifting the same age archives at once write one lift
// record per memory: only the one whose write applied audits it.
func TestConcurrentLiftsAuditOnce(t *testing.T) {
	h := newHarness(t)
	ids := h.seed(t, 40)
	for _, id := range ids {
		h.ageArchive(t, id, time.Now().Add(-time.Hour))
	}
	cfg := consolidate.DefaultConfig()
	cfg.Rate, cfg.BatchSize = 0, 8
	jobs := []*consolidate.Job{h.job(t, cfg, "r1"), h.job(t, cfg, "r2")}
	reps := make([]consolidate.Report, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			var err error
			if reps[i], err = j.Run(context.Background(), consolidate.Request{Collection: "mem"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// A replica whose identical lift lost the race still finds its token
	// (the record's id) in the point and counts it; the record is one.
	if got := reps[0].Lifted + reps[1].Lifted; got < len(ids) {
		t.Errorf("lifted %d + %d, want at least %d in all", reps[0].Lifted, reps[1].Lifted, len(ids))
	}
	for _, id := range ids {
		m, _ := h.get(t, id)
		if !m.Retrievable {
			t.Errorf("%s not lifted", id)
		}
		if n := len(h.liftRecords(t, id)); n != 1 {
			t.Errorf("%s: %d lift records, want 1", id, n)
		}
	}
}
