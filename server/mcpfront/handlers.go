package mcpfront

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memrank/memrank/client"
)

func (t *tools) remember(ctx context.Context, req *mcp.CallToolRequest, in RememberInput) (string, Outcome, error) {
	coll, api, err := t.target(req, in.Collection)
	if err != nil {
		return "", Outcome{}, err
	}
	obs := client.Observation{
		Collection: coll, Text: in.Text, MemoryType: in.MemoryType, Source: in.Source, Grounding: in.Grounding,
		Attribution: in.Attribution, Speaker: in.Speaker, SessionID: in.SessionID, TurnID: in.TurnID, Entities: in.Entities,
		Modality: in.Modality, ObservationID: in.ObservationID,
	}
	if obs.ObservedAt, err = rfc3339("observed_at", in.ObservedAt); err != nil {
		return "", Outcome{}, err
	}
	out, err := api.Observe(ctx, obs)
	if err != nil {
		return "", Outcome{}, t.callError(ctx, "remember", err)
	}
	o := outcome(out)
	return outcomeSummary(o, coll), o, nil
}

func (t *tools) recall(ctx context.Context, req *mcp.CallToolRequest, in RecallInput) (string, RecallOutput, error) {
	coll, api, err := t.target(req, in.Collection)
	if err != nil {
		return "", RecallOutput{}, err
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultRecallSize
	}
	rr := client.RetrieveRequest{Collection: coll, Text: in.Query, Limit: limit, IncludeArchived: in.IncludeArchived}
	if rr.At, err = rfc3339("at", in.At); err != nil {
		return "", RecallOutput{}, err
	}
	if in.Filter != nil {
		if rr.Filter, err = json.Marshal(in.Filter); err != nil {
			return "", RecallOutput{}, errors.New("filter: not a JSON object")
		}
	}
	res, err := api.Retrieve(ctx, rr)
	if err != nil {
		return "", RecallOutput{}, t.callError(ctx, "recall", err)
	}
	out := recallOutput(coll, in.Query, res, t.cfg.TextKey)
	return recallSummary(out), out, nil
}

func (t *tools) confirm(ctx context.Context, req *mcp.CallToolRequest, in ConfirmInput) (string, Outcome, error) {
	coll, api, err := t.target(req, in.Collection)
	if err != nil {
		return "", Outcome{}, err
	}
	out, err := api.Confirm(ctx, client.Confirmation{
		Collection: coll, MemoryID: in.MemoryID, SessionID: in.SessionID, TurnID: in.TurnID, ObservationID: in.ObservationID,
	})
	if err != nil {
		return "", Outcome{}, t.callError(ctx, "confirm", err)
	}
	o := outcome(out)
	return outcomeSummary(o, coll), o, nil
}

func (t *tools) correct(ctx context.Context, req *mcp.CallToolRequest, in CorrectInput) (string, Outcome, error) {
	coll, api, err := t.target(req, in.Collection)
	if err != nil {
		return "", Outcome{}, err
	}
	out, err := api.Correct(ctx, in.MemoryID, client.Observation{
		Collection: coll, Text: in.Text, MemoryType: in.MemoryType, Source: in.Source, SessionID: in.SessionID,
		TurnID: in.TurnID, Entities: in.Entities, Speaker: in.Speaker, ObservationID: in.ObservationID,
	})
	if err != nil {
		return "", Outcome{}, t.callError(ctx, "correct", err)
	}
	o := outcome(out)
	return outcomeSummary(o, coll), o, nil
}

func (t *tools) forget(ctx context.Context, req *mcp.CallToolRequest, in ForgetInput) (string, ForgetOutput, error) {
	if (in.SessionID == "") == (in.MemoryID == "") {
		return "", ForgetOutput{}, errors.New("forget: give exactly one of session_id and memory_id")
	}
	coll, api, err := t.target(req, in.Collection)
	if err != nil {
		return "", ForgetOutput{}, err
	}
	out := ForgetOutput{Collection: coll, Forgot: "session", ID: in.SessionID}
	var rep *client.ForgetReport
	if in.SessionID != "" {
		rep, err = api.ForgetSession(ctx, coll, in.SessionID)
	} else {
		out.Forgot, out.ID = "memory", in.MemoryID
		rep, err = api.ForgetMemory(ctx, coll, in.MemoryID)
	}
	if err != nil {
		return "", ForgetOutput{}, t.callError(ctx, "forget", err)
	}
	out.MemoriesUpdated, out.MemoriesDeleted = rep.MemoriesUpdated, rep.MemoriesDeleted
	out.AuditRedacted, out.AuditDeleted, out.AuditKept, out.AuditPolicy = rep.AuditRedacted, rep.AuditDeleted, rep.AuditKept, rep.AuditPolicy
	return forgetSummary(out), out, nil
}

func (t *tools) stats(ctx context.Context, req *mcp.CallToolRequest, in StatsInput) (string, StatsOutput, error) {
	coll, api, err := t.target(req, in.Collection)
	if err != nil {
		return "", StatsOutput{}, err
	}
	st, err := api.Stats(ctx, coll)
	if err != nil {
		return "", StatsOutput{}, t.callError(ctx, "stats", err)
	}
	out := StatsOutput{
		Collection: coll, Memories: st.Memories, Archived: st.Archived, Superseded: st.Superseded,
		AverageConfidence: st.AverageConfidence, Buckets: st.Buckets, Tiers: st.Tiers, Types: st.Types, Decisions: st.Decisions,
	}
	return statsSummary(out), out, nil
}

// rfc3339 reads the RFC 3339 time of argument name; "" is the zero time
// (the server's now).
func rfc3339(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if y := at.UTC().Year(); err != nil || y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("%s: %.40q is not an RFC 3339 time (e.g. 2026-11-01T10:00:00Z)", name, s)
	}
	return at, nil
}

func outcome(o *client.Outcome) Outcome {
	return Outcome{
		Decision: o.Decision, MemoryID: o.MemoryID, Confidence: float64(o.Confidence), Observations: o.Observations,
		DedupTier: o.DedupTier, Superseded: o.Superseded, Merged: o.Merged, Reason: o.Reason,
		Replayed: o.Replayed, AlreadyCounted: o.AlreadyCounted, CreatedCollection: o.CreatedCollection, Warnings: o.Warnings,
	}
}

// recallOutput is the retrieve answer as recall gives it.
func recallOutput(coll, query string, res *client.RetrieveResponse, textKey string) RecallOutput {
	out := RecallOutput{Collection: coll, Query: query, Reranked: res.Reranked, PassThrough: res.PassThrough, Empty: res.Empty, Memories: []Recalled{}}
	if !res.At.IsZero() {
		out.At = res.At.UTC().Format(time.RFC3339Nano)
	}
	// Below the gate, a result either is the query's best match with
	// nothing trusted as close, or came back because nothing passed at all.
	allBelow := len(res.Results) > 0
	for _, r := range res.Results {
		allBelow = allBelow && (r.BelowGate || r.Confidence == nil)
	}
	for _, r := range res.Results {
		m := Recalled{
			ID: string(r.ID), Text: payloadText(r.Payload, textKey), Score: float64(r.Score), Similarity: float64(r.BaseScore),
			Confidence: r.Confidence, Freshness: r.Freshness, BelowGate: r.BelowGate, Render: r.Render, Archived: r.Archived,
		}
		if r.Tier != nil {
			m.Tier = *r.Tier
		}
		if r.Guard != nil {
			m.Relevance = *r.Guard
		}
		for _, id := range r.FoldedIDs {
			m.Folded = append(m.Folded, string(id))
		}
		m.Why = why(r, res.Reranked, allBelow)
		out.Memories = append(out.Memories, m)
	}
	for _, d := range res.Dropped {
		if out.LeftOut == nil {
			out.LeftOut = map[string]int{}
		}
		out.LeftOut[d.Reason]++
	}
	return out
}

// payloadText is the memory's text from its payload; "" when there is
// none.
func payloadText(payload json.RawMessage, key string) string {
	var p map[string]json.RawMessage
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(p[key], &s) != nil {
		return ""
	}
	return s
}
