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

	"github.com/memrank/memrank/dedup"
)

type forgetOptions struct {
	collection, session, memory string
	tenant, apiKey, output      string
	timeout                     time.Duration
}

func newForgetCmd(e *env) *cobra.Command {
	var o forgetOptions
	cmd := &cobra.Command{
		Use:   "forget",
		Short: "Forget a session's evidence (a user's right to erasure), or delete one memory",
		Long: `Remove what one session contributed to a memory collection: every memory the session
supported is recomputed from the evidence that remains (its n, confidence, source, times,
sessions, turns, entities and modalities), memories only that session supported are deleted,
and claims superseded by a deleted memory become retrievable again. The session's audit
records are redacted, deleted or kept as forget.audit says (redact by default). With
--memory instead of --session, that one memory is deleted (with the duplicates merged into it).

Running it again finds nothing left to do: every count is 0. It is the same operation as
DELETE /v1/sessions/{id} and DELETE /v1/memories/{id} on a running memrank (see
docs/forgetting.md). It runs in process on the configured upstream (--upstream, or the
embedded store in --data, which a running serve holds locked). When tenancy is on, --tenant
(or a tenant's --api-key) names the tenant, and only its memories are touched.`,
		Example: `  memrank forget --collection memories --session s-42
  memrank forget --collection memories --memory 3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34 -o json
  memrank forget --upstream localhost:6334 --collection memories --session s-42 --tenant alice`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runForget(cmd, e, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "the memory collection (required)")
	f.StringVar(&o.session, "session", "", "the session to forget")
	f.StringVar(&o.memory, "memory", "", "the id of one memory to delete (instead of --session)")
	f.StringVar(&o.tenant, "tenant", "", "tenant, when tenancy is on")
	f.StringVar(&o.apiKey, "api-key", "", "a tenant's api-key, when tenancy is on (instead of --tenant)")
	f.StringVarP(&o.output, "output", "o", "text", "text or json")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "bound on the whole operation")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("data", defaultConfig().Store.DataDir, "data directory of the embedded store")
	return cmd
}

func (o *forgetOptions) check() error {
	switch {
	case o.collection == "":
		return usageError{errors.New("--collection is required")}
	case (o.session == "") == (o.memory == ""):
		return usageError{errors.New("give one of --session and --memory")}
	case o.output != "text" && o.output != "json":
		return usageError{fmt.Errorf("--output %q: want text or json", o.output)}
	case o.timeout <= 0:
		return usageError{fmt.Errorf("--timeout %v must be positive", o.timeout)}
	}
	return nil
}

func runForget(cmd *cobra.Command, e *env, o *forgetOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	c, err := e.loadConfig(cmd.Flags(), writeFlagKeys)
	if err != nil {
		return err
	}
	if o.tenant != "" && (c.Tenancy.Key == "" || c.Tenancy.Header == "") {
		return usageError{errors.New("--tenant: tenancy is off, or tenancy.header is not configured (with tenancy.api_keys give --api-key)")}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	s, err := e.openLocal(ctx, c, io.Discard, false, stopHint("DELETE /v1/sessions/{id} or /v1/memories/{id} on it forgets the same way"))
	if err != nil {
		return err
	}
	defer s.close(context.Background())
	md := metadata.MD{}
	if o.apiKey != "" {
		md.Set("api-key", o.apiKey)
	}
	if o.tenant != "" {
		md.Set(c.Tenancy.Header, o.tenant)
	}
	tenant, err := s.policy.Tenant(md)
	if err != nil {
		return usageError{fmt.Errorf("tenancy is on: %w (give --tenant or a tenant's --api-key)", err)}
	}
	octx := s.cfg.Upstream.OwnContext(ctx)
	if o.apiKey != "" {
		octx = metadata.AppendToOutgoingContext(ctx, "api-key", o.apiKey)
	}
	var rep dedup.ForgetReport
	if o.session != "" {
		rep, err = s.engine.ForgetSession(octx, o.collection, tenant, o.session)
	} else {
		rep, err = s.engine.DeleteMemory(octx, o.collection, tenant, o.memory)
	}
	if err != nil {
		var ie *dedup.InputError
		if errors.As(err, &ie) {
			return usageError{err}
		}
		return fmt.Errorf("forget: %w", err)
	}
	if o.output == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	what := "session " + o.session
	if o.memory != "" {
		what = "memory " + o.memory
	}
	_, err = fmt.Fprintf(e.stdout, "forgot %s in %s: %d memories updated, %d deleted; audit records (forget.audit %s): %d redacted, %d deleted, %d kept\n",
		what, rep.Collection, rep.MemoriesUpdated, rep.MemoriesDeleted, rep.AuditPolicy, rep.AuditRedacted, rep.AuditDeleted, rep.AuditKept)
	return err
}
