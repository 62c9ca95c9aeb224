package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

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

// Remote is a running memrank's native API: POST /v1/observe for the
// write path, POST /v1/retrieve for explain.
type Remote struct {
	base         string
	apiKey       string
	tenantHeader string
	tenant       string
	timeout      time.Duration
	client       *http.Client
}

// NewRemote checks c.URL and makes a client of its own, so that Close
// releases only its connections.
func NewRemote(c RemoteConfig) (*Remote, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if !strings.Contains(c.URL, "://") {
			return nil, fmt.Errorf("%q is not an http(s) URL: write it with its scheme, e.g. http://%s", c.URL, c.URL)
		}
		return nil, fmt.Errorf("%q is not an http(s) URL", c.URL)
	}
	return &Remote{
		base:         strings.TrimRight(c.URL, "/"),
		apiKey:       c.APIKey,
		tenantHeader: c.TenantHeader,
		tenant:       c.Tenant,
		timeout:      c.Timeout,
		client:       &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
	}, nil
}

// Close releases the client's idle connections.
func (r *Remote) Close() { r.client.CloseIdleConnections() }

// statusError is a non-200 answer of the HTTP API, with its Qdrant error
// message.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.msg, e.code) }

// post sends body to path with the caller's credentials and returns the
// answer of a 200; any other status is a *statusError carrying the API's
// message. At most limit bytes of the answer are read.
func (r *Remote) post(ctx context.Context, path string, body []byte, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if r.apiKey != "" {
		req.Header.Set("api-key", r.apiKey)
	}
	if r.tenant != "" {
		req.Header.Set(r.tenantHeader, r.tenant)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", r.base+path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var qe struct {
			Status struct{ Error string } `json:"status"`
		}
		msg := fmt.Sprintf("%.200s", bytes.TrimSpace(b))
		if json.Unmarshal(b, &qe) == nil && qe.Status.Error != "" {
			msg = qe.Status.Error
		}
		return nil, &statusError{resp.StatusCode, msg}
	}
	return b, nil
}

// Observe posts obs, encoded as the HTTP API decodes it, and returns the
// decision. A non-200 answer is an error carrying the API's message and
// status, which InputFault reads.
func (r *Remote) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	body, err := native.EncodeObserveRequest(obs)
	if err != nil {
		return dedup.Outcome{}, err
	}
	b, err := r.post(ctx, "/v1/observe", body, 1<<20)
	if err != nil {
		return dedup.Outcome{}, err
	}
	var out native.OutcomeResponse
	if err := json.Unmarshal(b, &out); err != nil || out.Result.Decision == "" {
		return dedup.Outcome{}, fmt.Errorf("the answer of %s/v1/observe is not an observe response: %.200s", r.base, b)
	}
	return out.Result, nil
}

// Retrieve posts a /v1/retrieve body (native.DecodeRetrieveRequest's form)
// and returns the explained answer.
func (r *Remote) Retrieve(ctx context.Context, body []byte) (*native.RetrieveResponse, error) {
	b, err := r.post(ctx, "/v1/retrieve", body, 64<<20)
	if err != nil {
		return nil, err
	}
	var out native.RetrieveResponse
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("the answer of %s/v1/retrieve is not a retrieve response: %w", r.base, err)
	}
	return &out, nil
}
