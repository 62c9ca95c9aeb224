package locomo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

// NativeRetriever asks memrank's native API in process: POST /v1/retrieve
// on Handler (server/native's Service.Handler()) with the question's text
// and the limit, every other field at its default (accesses are counted).
type NativeRetriever struct {
	Handler http.Handler
	Header  http.Header // added to every request (an api-key, say)
	TurnKey string      // the payload key of the turn ids
}

// Retrieve implements Retriever.
func (n NativeRetriever) Retrieve(ctx context.Context, collection, text string, limit int) ([]Hit, error) {
	body, err := json.Marshal(struct {
		Collection string `json:"collection"`
		Text       string `json:"text"`
		Limit      int    `json:"limit"`
	}{collection, text, limit})
	if err != nil {
		return nil, err
	}
	var ans struct {
		Result []answerPoint `json:"result"`
	}
	if err := serve(ctx, n.Handler, n.Header, "/v1/retrieve", body, &ans); err != nil {
		return nil, err
	}
	return hitsOf(ans.Result, n.TurnKey)
}

// RESTQuerier asks Qdrant's REST query API in process: POST
// /collections/{c}/points/query on Handler (memrank's REST front) with the
// question's vector, the limit and the payload.
type RESTQuerier struct {
	Handler http.Handler
	Header  http.Header // added to every request (an api-key, say)
	TurnKey string      // the payload key of the turn ids
}

// QueryPoints implements Querier.
func (q RESTQuerier) QueryPoints(ctx context.Context, collection string, vector []float32, limit int) ([]Hit, error) {
	body, err := json.Marshal(struct {
		Query       []float32 `json:"query"`
		Limit       int       `json:"limit"`
		WithPayload bool      `json:"with_payload"`
	}{vector, limit, true})
	if err != nil {
		return nil, err
	}
	var ans struct {
		Result struct {
			Points []answerPoint `json:"points"`
		} `json:"result"`
	}
	if err := serve(ctx, q.Handler, q.Header, "/collections/"+url.PathEscape(collection)+"/points/query", body, &ans); err != nil {
		return nil, err
	}
	return hitsOf(ans.Result.Points, q.TurnKey)
}

// answerPoint is a result as both APIs write it.
type answerPoint struct {
	ID      json.RawMessage            `json:"id"`
	Payload map[string]json.RawMessage `json:"payload"`
}

// serve posts body to h at path and decodes a 200 answer into out.
func serve(ctx context.Context, h http.Handler, header http.Header, path string, body []byte, out any) error {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		msg := strings.TrimSpace(rec.Body.String())
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		return fmt.Errorf("POST %s: status %d: %s", path, rec.Code, msg)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		return fmt.Errorf("POST %s: the answer: %w", path, err)
	}
	return nil
}

// hitsOf reads the results' ids and turn ids.
func hitsOf(points []answerPoint, turnKey string) ([]Hit, error) {
	hits := make([]Hit, len(points))
	for i, p := range points {
		var id any
		if err := json.Unmarshal(p.ID, &id); err != nil {
			return nil, fmt.Errorf("result %d: id: %w", i, err)
		}
		switch v := id.(type) {
		case string:
			hits[i].ID = strings.ToLower(v)
		case float64:
			hits[i].ID = string(p.ID)
		default:
			return nil, fmt.Errorf("result %d: id %s is not a number or a UUID", i, p.ID)
		}
		raw, ok := p.Payload[turnKey]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, &hits[i].TurnIDs); err != nil {
			return nil, fmt.Errorf("result %d (id %s): payload %s: %w", i, hits[i].ID, turnKey, err)
		}
	}
	return hits, nil
}
