package inprocess

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// echo answers what it was asked, as a server's handler sees it.
func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Seen", r.Method+" "+r.RequestURI+" host="+r.Host+" key="+r.Header.Get("Api-Key")+" body="+string(b))
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, "hello")
	w.Header().Set("X-Late", "ignored: after the first byte")
}

func TestRoundTrip(t *testing.T) {
	big := func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, strings.Repeat("x", 11)) }
	for _, tt := range []struct {
		name     string
		handler  http.HandlerFunc
		method   string
		body     string
		limit    int
		status   int
		seen     string
		wantBody string
		err      string
	}{
		{name: "served as a server would", handler: echo, method: "POST", body: `{"a":1}`, status: 201,
			seen: `POST /v1/observe?collection=c%20d host=memrank.invalid key=k1 body={"a":1}`, wantBody: "hello"},
		{name: "no body", handler: echo, method: "GET", status: 201,
			seen: `GET /v1/observe?collection=c%20d host=memrank.invalid key=k1 body=`, wantBody: "hello"},
		{name: "status 200 by default", handler: func(w http.ResponseWriter, r *http.Request) {}, method: "GET", status: 200},
		{name: "too large", handler: big, method: "GET", limit: 10, err: "too large"},
		{name: "panics", handler: func(http.ResponseWriter, *http.Request) { panic("boom") }, method: "GET", err: "panicked: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &http.Client{Transport: &Transport{Handler: tt.handler, MaxResponseBytes: tt.limit}}
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, err := http.NewRequest(tt.method, "http://memrank.invalid/v1/observe?collection=c%20d", body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Api-Key", "k1")
			resp, err := c.Do(req)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			got := []string{resp.Status, resp.Header.Get("X-Seen"), resp.Header.Get("X-Late"), string(b)}
			want := []string{strconv.Itoa(tt.status) + " " + http.StatusText(tt.status), tt.seen, "", tt.wantBody}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestContext: the request's deadline is the handler's, and a request
// whose context ended fails as it would on a network transport.
func TestContext(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		w.WriteHeader(http.StatusGatewayTimeout)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://memrank.invalid/", nil)
	_, err := (&http.Client{Transport: &Transport{Handler: h}}).Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
}
