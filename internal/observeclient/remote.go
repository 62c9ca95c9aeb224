package observeclient

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

// Remote posts observations to a running memrank's POST /v1/observe.
type Remote struct {
	endpoint     string
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
		return nil, fmt.Errorf("%q is not an http(s) URL", c.URL)
	}
	return &Remote{
		endpoint:     strings.TrimRight(c.URL, "/") + "/v1/observe",
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

// Observe posts obs, encoded as the HTTP API decodes it, and returns the
// decision. A non-200 answer is an error carrying the API's message and
// status, which InputFault reads.
func (r *Remote) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	body, err := native.EncodeObserveRequest(obs)
	if err != nil {
		return dedup.Outcome{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return dedup.Outcome{}, err
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
		return dedup.Outcome{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return dedup.Outcome{}, fmt.Errorf("reading the answer of %s: %w", r.endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		var qe struct {
			Status struct{ Error string } `json:"status"`
		}
		msg := fmt.Sprintf("%.200s", bytes.TrimSpace(b))
		if json.Unmarshal(b, &qe) == nil && qe.Status.Error != "" {
			msg = qe.Status.Error
		}
		return dedup.Outcome{}, &statusError{resp.StatusCode, msg}
	}
	var out native.OutcomeResponse
	if err := json.Unmarshal(b, &out); err != nil || out.Result.Decision == "" {
		return dedup.Outcome{}, fmt.Errorf("the answer of %s is not an observe response: %.200s", r.endpoint, b)
	}
	return out.Result, nil
}
