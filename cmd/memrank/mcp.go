package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/client"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/server/inprocess"
	"github.com/memrank/memrank/server/mcpfront"
)

// inprocessURL is the base URL of the native API served in process: no
// request for it ever leaves the process.
const inprocessURL = "http://memrank.inprocess"

// mcpFlagKeys maps mcp's flags to configuration keys.
var mcpFlagKeys = map[string]string{"upstream": "upstream.grpc", "data": "store.data_dir", "collection": "mcp.collection"}

type mcpOptions struct {
	url, apiKey string
	tenants     tenantFlags
	timeout     time.Duration
}

func newMCPCmd(e *env) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve memrank's MCP tools (remember, recall, confirm, correct, forget, stats) over stdio",
		Long: `Serve memrank's Model Context Protocol tools on stdin and stdout, for an MCP client that
starts memrank as a local server (Claude Desktop, an IDE, an agent framework). Stdout carries
only the protocol; logs go to stderr. See docs/mcp.md.

With --url the tools call a running memrank's native API, with --api-key (or $MEMRANK_API_KEY)
as their credential; when that server takes tenants from a header, --tenant goes in
--tenant-header (default: tenancy.header, if configured). Without --url they run memrank in
process on the configured upstream (--upstream, or the embedded store in --data, which a
running serve holds locked: then use --url); with tenancy on, --tenant (sent in
tenancy.header) or a tenant's --api-key names the tenant, and it refuses to start without one.

` + "`memrank serve`" + ` serves the same tools over streamable HTTP at /mcp, with each request's own
credentials.`,
		Example: `  memrank mcp --url http://127.0.0.1:6333 --collection dana_memories
  MEMRANK_API_KEY=key-alice memrank mcp --url https://memrank.internal:6333
  memrank mcp --url http://gateway:6333 --tenant-header x-tenant --tenant alice
  memrank mcp --data ./memrank-data --collection notes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(cmd.Context(), e, cmd, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "a running memrank's HTTP address (e.g. http://127.0.0.1:6333); empty: in process")
	f.StringVar(&o.apiKey, "api-key", "", "api-key sent with each call (default $"+envAPIKey+")")
	o.tenants.addFlags(f)
	f.DurationVar(&o.timeout, "timeout", client.DefaultTimeout, "bound on each call of the native API")
	f.String("collection", "", "the collection of a tool call that names none (mcp.collection)")
	f.String("upstream", "", "in process: Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data); not with --url")
	f.String("data", defaultConfig().Store.DataDir, "in process: data directory of the embedded store; not with --url")
	return cmd
}

// runMCP serves the tools on stdin and stdout until the client closes
// stdin or ctx ends.
func runMCP(ctx context.Context, e *env, cmd *cobra.Command, o *mcpOptions) error {
	if err := o.check(cmd.Flags()); err != nil {
		return err
	}
	if o.apiKey == "" {
		o.apiKey = lookupEnv(e.environ, envAPIKey)
	}
	c, err := e.loadConfig(cmd.Flags(), mcpFlagKeys)
	if err != nil {
		return remoteTenancyHint(o.url, err)
	}
	if err := o.tenants.resolve(o.url, c.Tenancy.Header); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	api, closeAPI, err := openMCPAPI(ctx, e, c, o)
	if err != nil {
		return err
	}
	defer func() {
		if err := closeAPI(); err != nil {
			fmt.Fprintf(e.stderr, "memrank: closing: %v\n", err)
		}
	}()
	srv, err := mcpfront.New(mcpfront.Config{
		API: api, Collection: c.MCP.Collection, TextKey: c.PayloadKeys.Text, Version: versionString(), Logger: logger,
	})
	if err != nil {
		return err
	}
	in, ok := e.stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(e.stdin)
	}
	err = srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{e.stdout}})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		// The client closed stdin, or a signal stopped the command.
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}

// check refuses flags that would be ignored, or could not work, in the
// mode --url chooses: an MCP client's configuration is written once and
// then runs unseen, so a flag that silently does nothing goes unnoticed.
func (o *mcpOptions) check(fs *pflag.FlagSet) error {
	if o.timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %v must be positive", o.timeout)}
	}
	if err := o.tenants.check(o.url); err != nil || o.url == "" {
		return err
	}
	for _, name := range []string{"data", "upstream"} {
		if fs.Changed(name) {
			return usageError{fmt.Errorf("--%s: not with --url (the tools call the memrank at --url, which has its own store)", name)}
		}
	}
	return nil
}

// openMCPAPI is the native API the tools call: a running memrank's with
// --url, else one served in process on a stack of its own, through the
// same handler serve mounts at /v1 (credentials and tenancy included).
func openMCPAPI(ctx context.Context, e *env, c Config, o *mcpOptions) (*client.Client, func() error, error) {
	creds := []client.Option{client.WithTimeout(o.timeout), client.WithAPIKey(o.apiKey)}
	if o.tenants.tenant != "" {
		creds = append(creds, client.WithTenantHeader(o.tenants.header, o.tenants.tenant))
	}
	if o.url != "" {
		api, err := client.New(o.url, creds...)
		if err != nil {
			return nil, nil, usageError{fmt.Errorf("--url: %w", err)}
		}
		return api, func() error { return nil }, nil
	}
	s, err := e.openLocal(ctx, c, e.stderr, true, urlHint())
	if err != nil {
		return nil, nil, err
	}
	closeStack := func() error { return s.close(context.Background()) }
	md := metadata.MD{}
	if o.apiKey != "" {
		md.Set("api-key", o.apiKey)
	}
	o.tenants.addTo(md)
	if _, err := s.policy.Tenant(md); err != nil {
		closeStack()
		return nil, nil, usageError{fmt.Errorf("tenancy is on: %w (give --tenant or a tenant's --api-key)", err)}
	}
	hc := &http.Client{Transport: &inprocess.Transport{Handler: s.native.Handler()}}
	api, err := client.New(inprocessURL, append(creds, client.WithHTTPClient(hc))...)
	if err != nil {
		closeStack()
		return nil, nil, err
	}
	return api, closeStack, nil
}

// mcpHTTP is serve's /mcp: the tools over streamable HTTP, calling the
// native API in process with each request's own credentials (the native
// handler checks them as it checks a /v1 request's). Nil when mcp.enabled
// is false.
func (s *stack) mcpHTTP(native http.Handler) http.Handler {
	if !s.cfg.MCP.Enabled {
		return nil
	}
	log := s.tel.Settings().Logger
	hc := &http.Client{Transport: &inprocess.Transport{Handler: native}}
	api, err := client.New(inprocessURL, client.WithHTTPClient(hc))
	var srv *mcp.Server
	if err == nil {
		srv, err = mcpfront.New(mcpfront.Config{
			API: api, TenantHeader: s.cfg.Tenancy.Header, Collection: s.cfg.MCP.Collection,
			TextKey: s.cfg.PayloadKeys.Text, Version: versionString(), Logger: log,
		})
	}
	if err != nil {
		// Only a configuration Validate refused gets here.
		log.Error("the MCP server cannot start: /mcp answers 503", "error", err)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			qdrantjson.WriteError(w, time.Now(), qdrantjson.Errorf(qdrantjson.ClassUnavailable, "the MCP server is not available"))
		})
	}
	// serve puts hostguard in front of the whole port.
	return mcpfront.Handler(srv, mcpfront.HTTPOptions{Logger: log, HostGuarded: true})
}

// nopWriteCloser is stdout for the transport: closing the session must not
// close the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
