// Package mcpfront is memrank's Model Context Protocol server: six tools
// an agent's model calls to keep and use memories (remember, recall,
// confirm, correct, forget, stats), built on the official Go SDK.
//
// The tools hold no logic of the memory store: each one is a call of
// memrank's native HTTP API through package client, so that validation,
// tenancy, credentials and every decision are the native API's, and a tool
// answers what the API answers, summarised for a model (a short text) and
// in full as structured content. An answer other than 200 becomes a tool
// error carrying the API's own message (written for callers); nothing
// internal reaches the model, and no input makes a tool panic.
//
// Over streamable HTTP (Handler) each tool call acts with the credentials
// of the HTTP request that carried it: its api-key and Authorization
// headers, and the tenancy header when one is configured, are forwarded
// and nothing else, so a call without valid credentials is refused by the
// native API exactly as a direct request would be. Over stdio (or any
// transport without HTTP headers) the calls carry the client's own
// credentials (client.WithAPIKey).
package mcpfront

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memrank/memrank/client"
)

// Defaults.
const (
	DefaultTextKey    = "text"
	DefaultRecallSize = 5
	// MaxRecallSize bounds recall's limit: more would not fit a model's
	// context usefully.
	MaxRecallSize = 50
	// maxCollection is the native API's bound on a collection name.
	maxCollection = 255
)

// Config configures the MCP server.
type Config struct {
	// API is the native API the tools call. Required.
	API *client.Client
	// TenantHeader is the configured tenancy header (tenancy.header),
	// forwarded from each HTTP request with its credentials; "" when
	// tenants come from API keys or tokens.
	TenantHeader string
	// Collection is the collection of a tool call that names none; ""
	// makes the collection argument required.
	Collection string
	// TextKey is the payload key of a memory's text (payload_keys.text);
	// default "text".
	TextKey string
	// Version is the server's version in the MCP handshake.
	Version string
	// Logger receives what a tool error leaves out (the cause of a failed
	// call); nil discards it.
	Logger *slog.Logger
}

// Validate reports a configuration New cannot use.
func (c Config) Validate() error {
	var errs []error
	if c.API == nil {
		errs = append(errs, errors.New("mcpfront: API is required"))
	}
	if len(c.Collection) > maxCollection {
		errs = append(errs, fmt.Errorf("mcpfront: the default collection is longer than %d bytes", maxCollection))
	}
	if strings.ContainsAny(c.TenantHeader, " \t\r\n:") {
		errs = append(errs, fmt.Errorf("mcpfront: tenant header %q is not a header name", c.TenantHeader))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.TextKey == "" {
		c.TextKey = DefaultTextKey
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// instructions tell the model what the server is for and how the tools go
// together.
const instructions = `memrank keeps long-term memories about the user and their world, and ranks them by how much to trust them: similarity, confidence (how the fact was learnt and how often it was seen independently), freshness and use.
Call recall before answering anything that may depend on what you were told earlier. Call remember for each new durable fact, preference or event, as one short self-contained statement, with the conversation's session_id. When the user confirms a memory call confirm; when they correct one call correct with the right statement; when they ask you to forget something call forget. Memory ids come from recall and remember.`

// New builds the MCP server with the six tools.
func New(c Config) (*mcp.Server, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t := &tools{cfg: c.withDefaults()}
	srv := mcp.NewServer(&mcp.Implementation{
		Name:    "memrank",
		Title:   "memrank memories",
		Version: t.cfg.Version,
	}, &mcp.ServerOptions{Instructions: instructions, Logger: t.cfg.Logger})
	if err := t.register(srv); err != nil {
		return nil, err
	}
	return srv, nil
}

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// Logger receives the transport's errors; nil discards them.
	Logger *slog.Logger
	// HostGuarded says that a guard in front of the handler already checks
	// Host and Origin for every browser request to the port (every
	// request when the port needs no credential), with the names the
	// operator allowed (package hostguard). The SDK's own check
	// is then left off: it refuses every Host that is not loopback on a
	// loopback listener, a reverse proxy's on the same machine too,
	// whatever the operator allowed.
	HostGuarded bool
}

// Handler serves srv over the streamable HTTP transport. It is stateless:
// every POST is a whole exchange, nothing is kept between requests, so
// there is no session to bound, expire or take over, and each call carries
// its own credentials. Answers are JSON, not event streams. Unless
// HostGuarded, the SDK refuses a request that reached a loopback listener
// with a Host that is not loopback (DNS rebinding); it checks no Origin.
func Handler(srv *mcp.Server, o HTTPOptions) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     o.Logger,
		DisableLocalhostProtection: o.HostGuarded,
	})
}

// forwarded are the headers of an MCP request that carry the caller's
// credentials to the native API (besides the configured tenant header).
var forwarded = []string{"Api-Key", "Authorization"}

// api is the client a tool call uses: over HTTP, the base client with
// exactly the credentials of the HTTP request that carried the call (none
// when it had none, so the native API decides, and fails closed); over a
// transport without headers, the base client with its own.
func (t *tools) api(req *mcp.CallToolRequest) (*client.Client, error) {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return t.cfg.API, nil
	}
	names := forwarded
	if t.cfg.TenantHeader != "" {
		names = append(names[:len(names):len(names)], t.cfg.TenantHeader)
	}
	opts := make([]client.Option, 0, len(names))
	for _, name := range names {
		vals := req.Extra.Header.Values(name)
		if len(vals) > 1 {
			return nil, fmt.Errorf("the request carries %d %s headers: send one", len(vals), http.CanonicalHeaderKey(name))
		}
		v := ""
		if len(vals) == 1 {
			v = vals[0]
		}
		opts = append(opts, client.WithHeader(name, v))
	}
	return t.cfg.API.With(opts...), nil
}

// tools holds what the tool handlers share.
type tools struct {
	cfg Config
}

// target is a call's collection and the client it calls with (see
// collection and api).
func (t *tools) target(req *mcp.CallToolRequest, given string) (string, *client.Client, error) {
	coll, err := t.collection(given)
	if err != nil {
		return "", nil, err
	}
	api, err := t.api(req)
	if err != nil {
		return "", nil, err
	}
	return coll, api, nil
}

// collection is the call's collection, or the default.
func (t *tools) collection(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if t.cfg.Collection != "" {
		return t.cfg.Collection, nil
	}
	return "", errors.New("collection: required (this server has no default collection)")
}

// callError is what a tool error says about a failed call of the native
// API: its status and its own message when it answered (written for
// callers), a fixed text when it did not. The cause goes to the log.
func (t *tools) callError(ctx context.Context, tool string, err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.Status != 0 {
		return fmt.Errorf("%s: memrank refused the call (HTTP %d %s): %s", tool, ce.Status, http.StatusText(ce.Status), ce.Message)
	}
	t.cfg.Logger.WarnContext(ctx, "mcp tool call failed", "tool", tool, "error", err)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: memrank did not answer in time", tool)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: the call was cancelled", tool)
	case errors.Is(err, client.ErrConnection):
		return fmt.Errorf("%s: memrank's API could not be reached", tool)
	}
	return fmt.Errorf("%s: memrank's answer could not be read", tool)
}
