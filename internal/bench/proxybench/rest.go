package proxybench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/admission"
	"github.com/memrank/memrank/server/restapi"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/upstream"
)

// restPaths are a run's two REST paths (Options.REST), each served on
// loopback HTTP: direct, Qdrant's REST API as `memrank qdrant-compat`
// serves it (the REST front over the store, in process); and through
// memrank, serve's REST front with its HTTP admission limits, over
// memrank's gRPC front in process, the same server the gRPC clients reach.
type restPaths struct {
	direct, proxied string // base URLs
	client          *http.Client
	bodies          [][]byte // one query body per query vector
	servers         []*http.Server
	serving         sync.WaitGroup
	closers         []func() error // closed last first
}

func (f *Fixture) startREST(ctx context.Context, front *grpc.Server, tel settings.Settings) error {
	r := &restPaths{}
	f.rest = r
	storeIP := upstream.ServeInProcess(store.NewServer(f.db))
	r.closers = append(r.closers, storeIP.Close)
	sc, err := qdrant.NewClient(storeIP.ClientConfig())
	if err != nil {
		return fmt.Errorf("proxybench: in-process store client: %w", err)
	}
	r.closers = append(r.closers, sc.Close)
	direct, err := restapi.New(restapi.Config{Points: sc.GetPointsClient(), Collections: sc.GetCollectionsClient(), Qdrant: sc.GetQdrantClient()})
	if err != nil {
		return err
	}

	limits := admission.DefaultConfig()
	frontIP := upstream.ServeInProcess(front)
	r.closers = append(r.closers, frontIP.Close)
	conn, err := upstream.DialInProcess(ctx, frontIP, upstream.ClientTelemetry(tel))
	if err != nil {
		return err
	}
	r.closers = append(r.closers, conn.Close)
	proxied, err := restapi.New(restapi.Config{Points: qdrant.NewPointsClient(conn), Collections: qdrant.NewCollectionsClient(conn),
		Qdrant: qdrant.NewQdrantClient(conn), MaxBodyBytes: int64(limits.MaxBodyBytes), Telemetry: tel})
	if err != nil {
		return err
	}
	lim, err := admission.New(limits, "http", tel)
	if err != nil {
		return err
	}
	if r.direct, err = r.serve(direct, nil); err != nil {
		return err
	}
	if r.proxied, err = r.serve(lim.Handler(proxied), lim.Listener); err != nil {
		return err
	}
	// Enough idle connections for every request in flight, as a client
	// with keep-alive holds them: none is opened per request.
	r.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: f.opts.InFlight + 1}}
	for _, q := range f.queries {
		b, err := json.Marshal(map[string]any{"query": q, "limit": f.opts.Limit, "with_payload": true})
		if err != nil {
			return fmt.Errorf("proxybench: query body: %w", err)
		}
		r.bodies = append(r.bodies, b)
	}
	return nil
}

// serve serves h on a loopback port (through wrap, nil: none) until
// close.
func (r *restPaths) serve(h http.Handler, wrap func(net.Listener) net.Listener) (string, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("proxybench: listen: %w", err)
	}
	url := "http://" + lis.Addr().String()
	if wrap != nil {
		lis = wrap(lis)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	r.servers = append(r.servers, srv)
	r.serving.Go(func() { _ = srv.Serve(lis) }) // returns when close shuts it down
	return url, nil
}

// query sends query i to base as a Qdrant REST client does and checks
// that it answered points.
func (r *restPaths) query(ctx context.Context, base string, i int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/collections/"+Collection+"/points/query",
		bytes.NewReader(r.bodies[i%len(r.bodies)]))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("proxybench: REST query: %s: %.200s", res.Status, body)
	}
	var out struct {
		Result struct {
			Points []json.RawMessage `json:"points"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("proxybench: REST reply: %w", err)
	}
	if len(out.Result.Points) == 0 {
		return errors.New("proxybench: a REST query returned no points")
	}
	return nil
}

// close stops the HTTP servers, then the in-process connections and
// servers.
func (r *restPaths) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, s := range r.servers {
		errs = append(errs, s.Shutdown(ctx))
	}
	r.serving.Wait()
	if r.client != nil {
		r.client.CloseIdleConnections()
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i]())
	}
	return errors.Join(errs...)
}
