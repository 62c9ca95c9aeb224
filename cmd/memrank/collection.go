package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/client"
	"github.com/memrank/memrank/dedup"
)

type createCollectionOptions struct {
	collection, url, apiKey, output string
	timeout                         time.Duration
}

func newCreateCollectionCmd(e *env) *cobra.Command {
	var o createCollectionOptions
	cmd := &cobra.Command{
		Use:   "create-collection",
		Short: "Make a memory collection before its first observation",
		Long: `Make a memory collection as its first observation would: the collection, with the
configured embedder's dimension and cosine distance, its payload indexes, and its audit
companion <collection>_memrank_audit, which records the embedder. An existing memory
collection is kept as it is ("already existed"); a collection of another vector size is
refused.

It is the same operation as PUT /v1/collections/{name}. With --url it asks a running memrank
(with tenancy on, only an administrator's --api-key may). Without, it runs in process on
the configured upstream (--upstream, or the embedded store in --data, which a running serve
holds locked).`,
		Example: `  memrank create-collection --collection memories
  memrank create-collection --url http://localhost:6333 --api-key ADMIN_KEY --collection memories -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCreateCollection(cmd, e, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "the memory collection to make (required)")
	f.StringVar(&o.url, "url", "", "a running memrank's HTTP address (e.g. http://localhost:6333); empty: in process")
	f.StringVar(&o.apiKey, "api-key", "", "api-key sent with the request (default $"+envAPIKey+")")
	f.StringVarP(&o.output, "output", "o", "text", "text or json")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "bound on the whole operation")
	f.String("upstream", "", "in process: Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data); not with --url")
	f.String("data", defaultConfig().Store.DataDir, "in process: data directory of the embedded store; not with --url")
	return cmd
}

func (o *createCollectionOptions) check(cmd *cobra.Command) error {
	switch {
	case o.collection == "":
		return usageError{errors.New("--collection is required")}
	case o.output != "text" && o.output != "json":
		return usageError{fmt.Errorf("--output %q: want text or json", o.output)}
	case o.timeout <= 0:
		return usageError{fmt.Errorf("--timeout %v must be positive", o.timeout)}
	}
	if o.url != "" {
		for _, name := range []string{"upstream", "data"} {
			if cmd.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s: not with --url (the memrank at --url has its own store)", name)}
			}
		}
	}
	return nil
}

func runCreateCollection(cmd *cobra.Command, e *env, o *createCollectionOptions) error {
	if err := o.check(cmd); err != nil {
		return err
	}
	if o.apiKey == "" {
		o.apiKey = lookupEnv(e.environ, envAPIKey)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	var made *client.CreatedCollection
	var err error
	if o.url != "" {
		made, err = o.remote(ctx)
	} else {
		made, err = o.local(ctx, cmd, e)
	}
	if err != nil {
		return err
	}
	if o.output == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(made)
	}
	what := "made memory collection " + made.Collection
	if made.Existed {
		what = "memory collection " + made.Collection + " already existed, kept as it is"
	}
	_, err = fmt.Fprintf(e.stdout, "%s (%s, %d dimensions, %s distance; audit companion %s)\n",
		what, made.Model, made.Dimensions, made.Distance, made.AuditCollection)
	return err
}

func (o *createCollectionOptions) remote(ctx context.Context) (*client.CreatedCollection, error) {
	api, err := client.New(o.url, client.WithAPIKey(o.apiKey), client.WithTimeout(o.timeout))
	if err != nil {
		return nil, usageError{fmt.Errorf("--url: %w", err)}
	}
	made, err := api.CreateCollection(ctx, o.collection)
	if errors.Is(err, client.ErrBadRequest) {
		return nil, usageError{err}
	}
	if err != nil {
		return nil, fmt.Errorf("create-collection: %w", err)
	}
	return made, nil
}

// local makes the collection in process, under memrank's own credentials
// (or --api-key's, for the store): whoever holds the data directory or the
// configuration administers the store already.
func (o *createCollectionOptions) local(ctx context.Context, cmd *cobra.Command, e *env) (*client.CreatedCollection, error) {
	c, err := e.loadConfig(cmd.Flags(), writeFlagKeys)
	if err != nil {
		return nil, err
	}
	s, err := e.openLocal(ctx, c, io.Discard, false, urlHint())
	if err != nil {
		return nil, err
	}
	defer s.close(context.Background())
	octx := s.cfg.Upstream.OwnContext(ctx)
	if o.apiKey != "" {
		octx = metadata.AppendToOutgoingContext(ctx, "api-key", o.apiKey)
	}
	made, err := s.engine.CreateCollection(octx, o.collection)
	if err != nil {
		var ie *dedup.InputError
		if errors.As(err, &ie) {
			return nil, usageError{err}
		}
		return nil, fmt.Errorf("create-collection: %w", err)
	}
	return &client.CreatedCollection{Collection: made.Collection, Created: !made.Existed, Existed: made.Existed,
		Model: made.Model, Dimensions: made.Dimensions, Distance: "Cosine", AuditCollection: made.AuditCollection}, nil
}
