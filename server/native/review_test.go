package native

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/tenancy"
)

// fakeReviewer records its calls and answers a canned queue, or err.
type fakeReviewer struct {
	mu    sync.Mutex
	calls []string
	err   error
}

var _ Reviewer = (*fakeReviewer)(nil)

func (f *fakeReviewer) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeReviewer) Review(_ context.Context, req consolidate.ReviewRequest) (consolidate.ReviewQueue, error) {
	f.note(fmt.Sprintf("review %s tenant=%s limit=%d dormant=%s", req.Collection, req.Tenant, req.Limit, req.DormantIdle))
	return consolidate.ReviewQueue{Collection: req.Collection, Total: 1,
		Items: []consolidate.ReviewItem{{ID: memID, Tier: "stale", Why: "stale: ..."}}}, f.err
}

func (f *fakeReviewer) Archive(_ context.Context, req consolidate.ArchiveRequest) (consolidate.ArchiveOutcome, error) {
	f.note(fmt.Sprintf("archive %s tenant=%s operator=%v %s", req.Collection, req.Tenant, req.Operator, req.ID))
	return consolidate.ArchiveOutcome{MemoryID: req.ID, From: "stale", Archived: true}, f.err
}

func (f *fakeReviewer) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func TestReviewRoutes(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		status                   int
		review                   string // the reviewer's call, if any
		write                    string // the write path's method, if any
	}{
		{"queue", http.MethodGet, "/v1/review?collection=mem&limit=5&dormant_idle_days=30", "", 200,
			"review mem tenant= limit=5 dormant=720h0m0s", ""},
		{"queue needs a collection", http.MethodGet, "/v1/review", "", 400, "", ""},
		{"queue: unknown parameter", http.MethodGet, "/v1/review?collection=mem&x=1", "", 400, "", ""},
		{"queue: bad limit", http.MethodGet, "/v1/review?collection=mem&limit=0", "", 400, "", ""},
		{"queue is GET", http.MethodPost, "/v1/review?collection=mem", "", 405, "", ""},
		{"archive", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"archive"}`, 200,
			"archive mem tenant= operator=false " + memID, ""},
		{"confirm", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"confirm"}`, 200, "", "confirm"},
		{"correct", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"correct","text":"Dana uses Helix"}`, 200, "", "correct"},
		{"correct needs a text", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"correct"}`, 400, "", ""},
		{"unknown action", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"delete"}`, 400, "", ""},
		{"unknown field", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"archive","x":1}`, 400, "", ""},
		{"bad id", http.MethodPost, "/v1/review/nope", `{"collection":"mem","action":"archive"}`, 400, "", ""},
		{"archive: session_id", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"archive","session_id":"s1"}`, 400, "", ""},
		{"archive: turn_id", http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"archive","turn_id":"t1"}`, 400, "", ""},
		{"archive: observation_id", http.MethodPost, "/v1/review/" + memID,
			`{"collection":"mem","action":"archive","observation_id":"o1"}`, 400, "", ""},
		{"confirm keeps its provenance", http.MethodPost, "/v1/review/" + memID,
			`{"collection":"mem","action":"confirm","session_id":"s1","turn_id":"t1","observation_id":"o1"}`, 200, "", "confirm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, rv := &fakeWritePath{}, &fakeReviewer{}
			h := writeHandler(t, f, Config{Review: rv})
			r := do(t, h, tc.method, tc.path, tc.body)
			if r.code != tc.status {
				t.Fatalf("status %d, want %d: %s", r.code, tc.status, r.body)
			}
			got := rv.received()
			if tc.review == "" && len(got) != 0 || tc.review != "" && (len(got) != 1 || got[0] != tc.review) {
				t.Errorf("reviewer calls %q, want %q", got, tc.review)
			}
			w := f.received()
			if tc.write == "" && len(w) != 0 || tc.write != "" && (len(w) != 1 || w[0].method != tc.write) {
				t.Errorf("write path calls %+v, want %q", w, tc.write)
			}
			if tc.write == "correct" && (w[0].obs.Corrects != memID || w[0].obs.Source != "direct" || w[0].obs.Text != "Dana uses Helix") {
				t.Errorf("correction %+v", w[0].obs)
			}
		})
	}
}

func TestReviewFailsClosed(t *testing.T) {
	f, rv := &fakeWritePath{}, &fakeReviewer{}
	h := writeHandler(t, f, Config{Review: rv, Tenancy: &tenancy.Policy{Key: "user_id", Header: "x-tenant"}})
	for _, rt := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/review?collection=mem", ""},
		{http.MethodPost, "/v1/review/" + memID, `{"collection":"mem","action":"archive"}`},
	} {
		if r := do(t, h, rt.method, rt.path, rt.body); r.code != http.StatusForbidden {
			t.Errorf("%s %s without a tenant: %d %s", rt.method, rt.path, r.code, r.body)
		}
		if r := do(t, h, rt.method, rt.path, rt.body, "X-Tenant", "alice"); r.code != http.StatusOK {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, r.code, r.body)
		}
	}
	got := rv.received()
	if len(got) != 2 || got[0] != "review mem tenant=alice limit=0 dormant=0s" || got[1] != "archive mem tenant=alice operator=false "+memID {
		t.Errorf("calls %q", got)
	}
	// Unconfigured: 501.
	h = writeHandler(t, &fakeWritePath{}, Config{})
	if r := do(t, h, http.MethodGet, "/v1/review?collection=mem", ""); r.code != http.StatusNotImplemented {
		t.Errorf("without a reviewer: %d", r.code)
	}
	// The reviewer's not found is a 404 with no internals.
	rv.err = fmt.Errorf("wrapped: %w: memory x in mem", consolidate.ErrNotFound)
	h = writeHandler(t, &fakeWritePath{}, Config{Review: rv})
	r := do(t, h, http.MethodPost, "/v1/review/"+memID, `{"collection":"mem","action":"archive"}`)
	if msg := qdrantError(t, r); r.code != http.StatusNotFound || strings.Contains(msg, "wrapped") {
		t.Errorf("not found: %d %q", r.code, msg)
	}
}

func TestDecodeIncludeArchived(t *testing.T) {
	req, err := DecodeRetrieveRequest([]byte(`{"collection":"mem","vector":[1,0],"include_archived":true}`))
	if err != nil || !req.IncludeArchived {
		t.Fatalf("include_archived: %+v, %v", req, err)
	}
	if req, err = DecodeRetrieveRequest([]byte(`{"collection":"mem","vector":[1,0]}`)); err != nil || req.IncludeArchived {
		t.Errorf("absent: %v, %v", req.IncludeArchived, err)
	}
	if _, err := DecodeRetrieveRequest([]byte(`{"collection":"mem","vector":[1,0],"include_archived":"yes"}`)); err == nil {
		t.Error("a string include_archived was accepted")
	}
}

// The reviewer's refusals map to statuses whose text names no internals,
// and an archive needs only the reviewer, not the write path.
func TestReviewAnswerStatuses(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
	}{
		{"kept changing", fmt.Errorf("wrapped: %w: memory x, after 3 attempts", consolidate.ErrBusy), http.StatusConflict},
		{"strict mode", fmt.Errorf("wrapped: %w: internal detail", consolidate.ErrIndexRequired), http.StatusInternalServerError},
		{"no tenant", fmt.Errorf("%w: tenancy is on and the request names no tenant", consolidate.ErrInput), http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := writeHandler(t, &fakeWritePath{}, Config{Review: &fakeReviewer{err: tc.err}})
			r := do(t, h, http.MethodPost, "/v1/review/"+memID, `{"collection":"mem","action":"archive"}`)
			msg := qdrantError(t, r)
			if r.code != tc.status || strings.Contains(msg, "wrapped") || strings.Contains(msg, "internal detail") {
				t.Errorf("status %d %q, want %d without internals", r.code, msg, tc.status)
			}
		})
	}
}

func TestReviewArchiveWithoutTheWritePath(t *testing.T) {
	rv := &fakeReviewer{}
	h := newHandler(t, Config{Ranker: &fakeRetriever{}, Review: rv})
	if r := do(t, h, http.MethodPost, "/v1/review/"+memID, `{"collection":"mem","action":"archive"}`); r.code != http.StatusOK {
		t.Errorf("archive without the write path: %d %s, want 200", r.code, r.body)
	}
	for _, body := range []string{`{"collection":"mem","action":"confirm"}`, `{"collection":"mem","action":"correct","text":"x"}`} {
		if r := do(t, h, http.MethodPost, "/v1/review/"+memID, body); r.code != http.StatusNotImplemented {
			t.Errorf("%s without the write path: %d %s, want 501", body, r.code, r.body)
		}
	}
	if got := rv.received(); len(got) != 1 {
		t.Errorf("reviewer calls %q, want the archive only", got)
	}
}
