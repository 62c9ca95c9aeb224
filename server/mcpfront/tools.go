package mcpfront

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RememberInput is remember's arguments: one observation for the write
// path (POST /v1/observe).
type RememberInput struct {
	Collection    string   `json:"collection,omitempty" jsonschema:"the memory collection; optional when the server has a default"`
	Text          string   `json:"text" jsonschema:"the memory: one short self-contained statement, e.g. 'Dana lives in Lisbon'"`
	MemoryType    string   `json:"memory_type,omitempty" jsonschema:"entity, event, fact (the default), preference or relation"`
	Source        string   `json:"source,omitempty" jsonschema:"how it is known: direct (the user said it), confirmed, strong_inference, weak_inference (the default) or speculation"`
	Grounding     string   `json:"grounding,omitempty" jsonschema:"whether the conversation supports the statement: supported (the default), partial, unknown or not_supported (not stored)"`
	Attribution   string   `json:"attribution,omitempty" jsonschema:"self (the speaker's own statement) or reported (someone else's, hearsay: trusted less)"`
	Speaker       string   `json:"speaker,omitempty" jsonschema:"who said the text, a name (e.g. Caroline): a first-person statement is about its speaker, so two people's statements are never merged; leave it out when unknown (a leading \"Name:\" of the text then names the speaker)"`
	SessionID     string   `json:"session_id,omitempty" jsonschema:"the conversation's id: the same fact from another session counts as independent evidence"`
	TurnID        string   `json:"turn_id,omitempty" jsonschema:"the turn within the session"`
	Entities      []string `json:"entities,omitempty" jsonschema:"the people, places and things the memory is about"`
	Modality      string   `json:"modality,omitempty" jsonschema:"where it was seen: chat, calendar, email, document..."`
	ObservedAt    string   `json:"observed_at,omitempty" jsonschema:"when it was observed, RFC 3339 (default now)"`
	ObservationID string   `json:"observation_id,omitempty" jsonschema:"an idempotency key: the same id again returns the first decision and changes nothing"`
}

// RecallInput is recall's arguments (POST /v1/retrieve with a text).
type RecallInput struct {
	Collection      string         `json:"collection,omitempty" jsonschema:"the memory collection; optional when the server has a default"`
	Query           string         `json:"query" jsonschema:"what to look for, in words (a question or a topic)"`
	Limit           int            `json:"limit,omitempty" jsonschema:"how many memories at most (default 5)"`
	Filter          map[string]any `json:"filter,omitempty" jsonschema:"optional Qdrant filter on the payload, e.g. {\"must\": [{\"key\": \"memory_type\", \"match\": {\"value\": \"preference\"}}]}"`
	IncludeArchived bool           `json:"include_archived,omitempty" jsonschema:"also return the memories a person or a review archived, marked as such (age alone never takes a memory out)"`
	At              string         `json:"at,omitempty" jsonschema:"answer as of this time, RFC 3339 (e.g. 2026-06-01T00:00:00Z): what was known then, memories first observed later left out, later corrections not yet applied; reads nothing as used"`
}

// ConfirmInput is confirm's arguments.
type ConfirmInput struct {
	Collection    string `json:"collection,omitempty" jsonschema:"the memory collection; optional when the server has a default"`
	MemoryID      string `json:"memory_id" jsonschema:"the memory the user confirmed (an id from recall or remember)"`
	SessionID     string `json:"session_id,omitempty" jsonschema:"the conversation's id"`
	TurnID        string `json:"turn_id,omitempty" jsonschema:"the turn within the session"`
	ObservationID string `json:"observation_id,omitempty" jsonschema:"an idempotency key: the same id again changes nothing"`
}

// CorrectInput is correct's arguments: the right statement, which
// supersedes the memory.
type CorrectInput struct {
	Collection    string   `json:"collection,omitempty" jsonschema:"the memory collection; optional when the server has a default"`
	MemoryID      string   `json:"memory_id" jsonschema:"the memory that is wrong (an id from recall or remember)"`
	Text          string   `json:"text" jsonschema:"the correct statement, e.g. 'Dana lives in Porto'"`
	MemoryType    string   `json:"memory_type,omitempty" jsonschema:"entity, event, fact (the default), preference or relation"`
	Source        string   `json:"source,omitempty" jsonschema:"how the correction is known; default direct (the user said it)"`
	SessionID     string   `json:"session_id,omitempty" jsonschema:"the conversation's id"`
	TurnID        string   `json:"turn_id,omitempty" jsonschema:"the turn within the session"`
	Entities      []string `json:"entities,omitempty" jsonschema:"the people, places and things the statement is about"`
	Speaker       string   `json:"speaker,omitempty" jsonschema:"who said the correct statement, a name; leave it out when unknown"`
	ObservationID string   `json:"observation_id,omitempty" jsonschema:"an idempotency key: the same id again changes nothing"`
}

// ForgetInput is forget's arguments: a session or a memory, exactly one.
type ForgetInput struct {
	Collection string `json:"collection,omitempty" jsonschema:"the memory collection; optional when the server has a default"`
	SessionID  string `json:"session_id,omitempty" jsonschema:"forget everything this session contributed (give this or memory_id)"`
	MemoryID   string `json:"memory_id,omitempty" jsonschema:"delete this memory and the duplicates merged into it (give this or session_id)"`
}

// StatsInput is stats' arguments.
type StatsInput struct {
	Collection string `json:"collection,omitempty" jsonschema:"the memory collection; optional when the server has a default"`
}

// Outcome is the write path's decision, as the native API answers it.
type Outcome struct {
	Decision          string   `json:"decision" jsonschema:"inserted, restatement, independent, contradiction, rejected, confirmed or corrected"`
	MemoryID          string   `json:"memory_id" jsonschema:"the memory the statement ended up in"`
	Confidence        float64  `json:"confidence" jsonschema:"that memory's confidence afterwards, 0 to 1"`
	Observations      int      `json:"observations" jsonschema:"its count of independent observations afterwards"`
	DedupTier         int      `json:"dedup_tier" jsonschema:"how a match was found: 1 same text, 2 similar vector, 3 the judge; 0 none"`
	Superseded        string   `json:"superseded,omitempty" jsonschema:"the memory a contradiction or correction superseded"`
	Merged            []string `json:"merged,omitempty" jsonschema:"duplicates merged into the memory"`
	Reason            string   `json:"reason,omitempty" jsonschema:"why it was rejected, or another note"`
	Replayed          bool     `json:"replayed" jsonschema:"the observation_id was seen before: the first decision, nothing changed"`
	AlreadyCounted    bool     `json:"already_counted,omitempty" jsonschema:"a confirmation from a session that had already confirmed the memory: observations unchanged"`
	CreatedCollection bool     `json:"created_collection,omitempty" jsonschema:"this call created the collection"`
	Warnings          []string `json:"warnings,omitempty" jsonschema:"what to know about the stored memory, e.g. that its confidence is below the retrieval gate"`
}

// RecallOutput is recall's answer.
type RecallOutput struct {
	Collection  string `json:"collection"`
	Query       string `json:"query"`
	Reranked    bool   `json:"reranked" jsonschema:"false when the collection is not a memory collection: the store's own answer"`
	PassThrough string `json:"pass_through,omitempty" jsonschema:"why the answer was not re-ranked"`
	At          string `json:"at,omitempty" jsonschema:"the time the answer was computed as of, when one was asked"`
	// Memories are in memrank's order, best first.
	Memories []Recalled `json:"memories"`
	// Empty says why no memory came back although the store had
	// candidates.
	Empty string `json:"empty,omitempty" jsonschema:"why no memory came back although the collection had candidates"`
	// LeftOut counts the candidates left out, by reason (below_gate,
	// folded, superseded, archived, not_retrievable).
	LeftOut map[string]int `json:"left_out,omitempty" jsonschema:"candidates left out, counted by reason"`
}

// Recalled is one memory of recall's answer.
type Recalled struct {
	ID         string   `json:"id" jsonschema:"the memory's id, for confirm, correct and forget"`
	Text       string   `json:"text"`
	Score      float64  `json:"score" jsonschema:"the final score memrank ranked it by"`
	Similarity float64  `json:"similarity" jsonschema:"the query's similarity to it"`
	Confidence *float64 `json:"confidence" jsonschema:"how much to trust it, 0 to 1; null for a point that is not a scored memory"`
	Freshness  *float64 `json:"freshness" jsonschema:"1 when just observed, halving every half-life"`
	Tier       string   `json:"tier,omitempty" jsonschema:"active, dormant, stale or archived, as of the answer's time: a label for upkeep, never a reason to leave a memory out"`
	Relevance  string   `json:"relevance,omitempty" jsonschema:"relevant (within the band of the best match), below_band or below_floor"`
	BelowGate  bool     `json:"below_gate,omitempty" jsonschema:"below the confidence gate, returned because it is the best match and nothing passing the gate is as close: uncertain"`
	Render     bool     `json:"render" jsonschema:"confident enough to state as a fact"`
	Folded     []string `json:"folded,omitempty" jsonschema:"duplicates folded into this memory"`
	Archived   string   `json:"archived,omitempty" jsonschema:"why it is out of answers (archived by a person or a review), returned because include_archived asked"`
	Why        string   `json:"why" jsonschema:"one line on why it ranks here"`
}

// ForgetOutput is what forgetting changed.
type ForgetOutput struct {
	Collection      string `json:"collection"`
	Forgot          string `json:"forgot" jsonschema:"session or memory"`
	ID              string `json:"id" jsonschema:"the session or memory forgotten"`
	MemoriesUpdated int    `json:"memories_updated" jsonschema:"memories recomputed without the session"`
	MemoriesDeleted int    `json:"memories_deleted" jsonschema:"memories deleted"`
	AuditRedacted   int    `json:"audit_redacted"`
	AuditDeleted    int    `json:"audit_deleted"`
	AuditKept       int    `json:"audit_kept"`
	AuditPolicy     string `json:"audit_policy" jsonschema:"what forgetting does with the audit trail: redact, delete or keep"`
}

// StatsOutput describes a collection (the caller's tenant's part of it).
type StatsOutput struct {
	Collection        string           `json:"collection"`
	Memories          int              `json:"memories"`
	Archived          int              `json:"archived"`
	Superseded        int              `json:"superseded"`
	AverageConfidence *float64         `json:"average_confidence"`
	Buckets           map[string]int   `json:"buckets" jsonschema:"memories per confidence bucket (high, medium, low)"`
	Tiers             map[string]int   `json:"tiers" jsonschema:"memories per tier"`
	Types             map[string]int   `json:"types" jsonschema:"memories per memory type"`
	Decisions         map[string]int64 `json:"decisions" jsonschema:"this server's write decisions in this collection since it started"`
}

func ptr[T any](v T) *T { return &v }

// register adds the six tools to srv.
func (t *tools) register(srv *mcp.Server) error {
	remember, err := schema[RememberInput](func(s *jsonschema.Schema) {
		s.Properties["text"].MinLength = ptr(1)
		s.Properties["grounding"].Enum = []any{"supported", "partial", "unknown", "not_supported"}
		s.Properties["attribution"].Enum = []any{"self", "reported", "hearsay"}
	})
	if err != nil {
		return err
	}
	recall, err := schema[RecallInput](func(s *jsonschema.Schema) {
		s.Properties["query"].MinLength = ptr(1)
		s.Properties["limit"].Minimum = ptr(1.0)
		s.Properties["limit"].Maximum = ptr(float64(MaxRecallSize))
		s.Properties["at"].Format = "date-time"
	})
	if err != nil {
		return err
	}
	confirm, err := schema[ConfirmInput](func(s *jsonschema.Schema) { s.Properties["memory_id"].MinLength = ptr(1) })
	if err != nil {
		return err
	}
	correct, err := schema[CorrectInput](func(s *jsonschema.Schema) {
		s.Properties["memory_id"].MinLength = ptr(1)
		s.Properties["text"].MinLength = ptr(1)
	})
	if err != nil {
		return err
	}
	forget, err := schema[ForgetInput](nil)
	if err != nil {
		return err
	}
	stats, err := schema[StatsInput](nil)
	if err != nil {
		return err
	}
	add(srv, t.cfg.Logger, &mcp.Tool{Name: "remember", Title: "Remember", InputSchema: remember, Description: rememberDoc,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}}, t.remember)
	add(srv, t.cfg.Logger, &mcp.Tool{Name: "recall", Title: "Recall", InputSchema: recall, Description: recallDoc,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}}, t.recall)
	add(srv, t.cfg.Logger, &mcp.Tool{Name: "confirm", Title: "Confirm a memory", InputSchema: confirm, Description: confirmDoc,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}}, t.confirm)
	add(srv, t.cfg.Logger, &mcp.Tool{Name: "correct", Title: "Correct a memory", InputSchema: correct, Description: correctDoc,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}}, t.correct)
	add(srv, t.cfg.Logger, &mcp.Tool{Name: "forget", Title: "Forget", InputSchema: forget, Description: forgetDoc,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}}, t.forget)
	add(srv, t.cfg.Logger, &mcp.Tool{Name: "stats", Title: "Memory statistics", InputSchema: stats, Description: statsDoc,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}}, t.stats)
	return nil
}

// schema is T's inferred input schema, adjusted by edit (enums, bounds
// the Go type cannot say).
func schema[T any](edit func(*jsonschema.Schema)) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("mcpfront: the schema of %T: %w", *new(T), err)
	}
	if edit != nil {
		edit(s)
	}
	return s, nil
}

// add registers a typed tool whose handler returns a summary for the
// model and the structured answer. A panic in the handler becomes a tool
// error: no input may take the server down.
func add[In, Out any](srv *mcp.Server, log *slog.Logger, tool *mcp.Tool, h func(context.Context, *mcp.CallToolRequest, In) (string, Out, error)) {
	mcp.AddTool(srv, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "mcp tool panicked", "tool", tool.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%s: internal error", tool.Name)
			}
		}()
		summary, out, err := h(ctx, req, in)
		if err != nil {
			var zero Out
			return nil, zero, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary}}}, out, nil
	})
}
