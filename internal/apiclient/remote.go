package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/memrank/memrank/client"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/server/native"
)

// RemoteConfig says which running memrank to post to, and as whom.
type RemoteConfig struct {
	// URL is the HTTP address of a running memrank, e.g.
	// http://localhost:6333.
	URL    string
	APIKey string // sent as api-key when set
	// TenantHeader is the configured tenancy header Tenant is sent in.
	TenantHeader, Tenant string
	// Timeout bounds each observation's round trip.
	Timeout time.Duration
}

// Remote is a running memrank's native API, through the Go SDK: POST
// /v1/observe for the write path, POST /v1/retrieve for explain. It speaks
// in the write path's own types (dedup.Outcome, native.RetrieveResponse),
// which the CLI prints.
type Remote struct {
	c  *client.Client
	hc *http.Client
}

// NewRemote checks c.URL and makes a client of its own, so that Close
// releases only its connections.
func NewRemote(c RemoteConfig) (*Remote, error) {
	if c.URL == "" { // the SDK's default is for programs, not a flag left empty
		return nil, fmt.Errorf("%q is not an http(s) URL: write it with its scheme, e.g. http://localhost:6333", c.URL)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	opts := []client.Option{client.WithHTTPClient(hc), client.WithTimeout(c.Timeout), client.WithAPIKey(c.APIKey)}
	if c.Tenant != "" {
		opts = append(opts, client.WithTenantHeader(c.TenantHeader, c.Tenant))
	}
	sdk, err := client.New(c.URL, opts...)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "client: "))
	}
	return &Remote{c: sdk, hc: hc}, nil
}

// Close releases the client's idle connections.
func (r *Remote) Close() { r.hc.CloseIdleConnections() }

// Observe posts obs, encoded as the HTTP API decodes it, and returns the
// decision. A non-200 answer is a *client.Error carrying the API's message
// and status, which InputFault reads.
func (r *Remote) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	body, err := native.EncodeObserveRequest(obs)
	if err != nil {
		return dedup.Outcome{}, err
	}
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodPost, "/v1/observe", nil, body, &raw); err != nil {
		return dedup.Outcome{}, err
	}
	var out native.OutcomeResponse
	if err := json.Unmarshal(raw, &out); err != nil || out.Result.Decision == "" {
		return dedup.Outcome{}, fmt.Errorf("the answer of %s/v1/observe is not an observe response: %.200s", r.c.URL(), raw)
	}
	return out.Result, nil
}

// Retrieve posts a /v1/retrieve body (native.DecodeRetrieveRequest's form)
// and returns the explained answer.
func (r *Remote) Retrieve(ctx context.Context, body []byte) (*native.RetrieveResponse, error) {
	var out native.RetrieveResponse
	if err := r.c.Do(ctx, http.MethodPost, "/v1/retrieve", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
