package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/config"
)

// tenantFlags are --tenant and --tenant-header, for the commands that call
// memrank's native API either in process or at --url (observe, import,
// explain, mcp). In process the tenant goes in tenancy.header, where the
// in-process API reads it. With --url the server's tenancy is what counts,
// which the local configuration does not know: the tenant goes in
// --tenant-header, or else in the local tenancy.header as a guess at the
// server's.
type tenantFlags struct {
	tenant string
	// header is --tenant-header; after resolve, the header the tenant
	// goes in.
	header string
}

func (t *tenantFlags) addFlags(f *pflag.FlagSet) {
	f.StringVar(&t.tenant, "tenant", "", "tenant, when tenants come from a header (--tenant-header with --url, else tenancy.header)")
	f.StringVar(&t.header, "tenant-header", "", "with --url: the header the server takes tenants from (default tenancy.header)")
}

// check refuses, before the configuration is read, a --tenant-header that
// would be ignored or could not work.
func (t *tenantFlags) check(url string) error {
	h := t.header
	switch {
	case h == "":
		return nil
	case url == "":
		return usageError{errors.New("--tenant-header: only with --url (in process, --tenant goes in tenancy.header)")}
	case t.tenant == "":
		return usageError{errors.New("--tenant-header: give --tenant too (the tenant to send in it)")}
	case !httpguts.ValidHeaderFieldName(h):
		return usageError{fmt.Errorf("--tenant-header %q is not an HTTP header name", h)}
	case strings.EqualFold(h, "api-key") || strings.EqualFold(h, "authorization"):
		return usageError{fmt.Errorf("--tenant-header %q carries credentials, not a tenant (give the key with --api-key)", h)}
	}
	return nil
}

// resolve settles the header the tenant goes in, given the configured
// tenancy.header: with --url, --tenant-header or else the configured one;
// in process, the configured one. A tenant with no header to go in is
// refused.
func (t *tenantFlags) resolve(url, configured string) error {
	if url == "" || t.header == "" {
		t.header = configured
	}
	if t.tenant == "" || t.header != "" {
		return nil
	}
	if url != "" {
		return usageError{errors.New("--tenant: give --tenant-header NAME, the header the memrank at --url takes tenants from " +
			"(when it takes them from API keys or tokens, the tenant comes from --api-key)")}
	}
	return usageError{errors.New("--tenant: tenancy.header is not configured (with tenancy.api_keys or tokens the tenant comes from --api-key)")}
}

// addTo puts the tenant, if any, in md as the in-process API reads it
// (after resolve).
func (t *tenantFlags) addTo(md metadata.MD) {
	if t.tenant != "" {
		md.Set(t.header, t.tenant)
	}
}

// remoteTenancyHint adds to a configuration error in the tenancy section,
// with --url, that tenancy is the server's. The likeliest cause is
// tenancy.header set alone, to say where the tenant goes, which a server
// needs tenancy.key with.
func remoteTenancyHint(url string, err error) error {
	if url != "" && tenancyProblem(err) {
		return usageError{fmt.Errorf("%w\nwith --url, tenancy is the server's: give the header it takes tenants from with --tenant-header", err)}
	}
	return err
}

// tenancyProblem reports whether the configuration error err names a key
// of the tenancy section.
func tenancyProblem(err error) bool {
	list := []error{err}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		list = joined.Unwrap()
	}
	for _, e := range list {
		var ce *config.Error
		if errors.As(e, &ce) && strings.HasPrefix(ce.Key, "tenancy.") {
			return true
		}
	}
	return false
}
