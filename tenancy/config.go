package tenancy

import (
	"fmt"
	"strings"

	"github.com/memrank/memrank/config/check"
)

// Config is the tenancy section of memrank's configuration. Tenancy is off
// while Key is empty; when on, exactly one of Header and APIKeys says where
// a request's tenant comes from.
type Config struct {
	Key     string            `koanf:"key"`                    // payload key holding the tenant
	Header  string            `koanf:"header"`                 // request header carrying the tenant
	APIKeys map[string]string `koanf:"api_keys" secret:"keys"` // API key -> tenant; the API keys are secrets
	// AdminAPIKeys may manage collections through memrank (create, delete,
	// aliases, snapshots, indexes) and read them with no tenant; every
	// other key is a tenant's or refused. Empty: nobody, through memrank.
	AdminAPIKeys []string `koanf:"admin_api_keys" secret:"true"`
	// JWT takes tenants from a verified token's claim.
	JWT JWTConfig `koanf:"jwt"`
}

// DefaultConfig returns the tenancy section's defaults: off.
func DefaultConfig() Config { return Config{APIKeys: map[string]string{}, AdminAPIKeys: []string{}} }

// Validate checks the tenancy section as it is, and fails closed: half a
// tenancy configuration is refused rather than run as no tenancy. API keys
// are named by their masked placeholders ("***1"), never shown.
func (c Config) Validate() error {
	var k check.Checker
	if c.Key != "" && !plainKey(c.Key) {
		k.Add("key", "%s is not a plain top-level payload key (no '.', '[', ']' or quotes)", check.Quote(c.Key))
	}
	switch {
	case c.Header == "":
	case !validFieldName(c.Header):
		k.Add("header", "%s is not a valid HTTP header name", check.Quote(c.Header))
	case !canCarryTenant(c.Header):
		k.Add("header", "%s cannot carry a tenant (gRPC reserves it, or it carries credentials)", check.Quote(c.Header))
	}
	for _, e := range check.MaskKeys(c.APIKeys) {
		if e.Key == "" {
			k.Add("api_keys."+e.Placeholder, "the API key is empty")
		} else {
			k.Secret("api_keys."+e.Placeholder, e.Key)
		}
		if e.Value == "" {
			k.Add("api_keys."+e.Placeholder, "the tenant is empty")
		} else if err := (&Policy{}).checkTenant(e.Value); err != nil {
			k.Add("api_keys."+e.Placeholder, "%s", strings.TrimPrefix(err.Error(), ErrNoTenant.Error()+": "))
		}
	}
	for i, a := range c.AdminAPIKeys {
		_, isTenant := c.APIKeys[a]
		switch {
		case a == "":
			k.Add(fmt.Sprintf("admin_api_keys[%d]", i), "the API key is empty")
		case isTenant:
			k.Add(fmt.Sprintf("admin_api_keys[%d]", i), "the API key is also a tenant's key (in %s)", check.Ref("api_keys"))
		default:
			k.Secret(fmt.Sprintf("admin_api_keys[%d]", i), a)
		}
	}
	k.Sub("jwt", c.JWT.Validate())
	sources := 0
	for _, on := range []bool{c.Header != "", len(c.APIKeys) > 0, c.JWT.Enabled()} {
		if on {
			sources++
		}
	}
	switch {
	case c.Key == "" && c.JWT.Enabled():
		k.Add("key", "must not be empty when %s is set", check.Ref("jwt.claim"))
	case sources > 1:
		k.Add("key", "set exactly one of %s, %s and %s: they are where a request's tenant comes from", check.Ref("header"), check.Ref("api_keys"), check.Ref("jwt.claim"))
	case c.Key == "" && len(c.AdminAPIKeys) > 0:
		k.Add("key", "must not be empty when %s is set", check.Ref("admin_api_keys"))
	case c.Key == "" && c.Header != "":
		k.Add("key", "must not be empty when %s is set", check.Ref("header"))
	case c.Key == "" && len(c.APIKeys) > 0:
		k.Add("key", "must not be empty when %s is set", check.Ref("api_keys"))
	case c.Key != "" && sources == 0:
		k.Add("key", "%s is set but none of %s, %s and %s says where a request's tenant comes from",
			check.Quote(c.Key), check.Ref("header"), check.Ref("api_keys"), check.Ref("jwt.claim"))
	}
	return k.Err()
}

// Policy is the policy c configures, its JWT keys loaded; check it with
// Policy.Validate.
func (c Config) Policy() (*Policy, error) {
	v, err := c.JWT.NewVerifier()
	if err != nil {
		return nil, err
	}
	return &Policy{Key: c.Key, Header: c.Header, APIKeys: c.APIKeys, AdminAPIKeys: c.AdminAPIKeys, JWT: v}, nil
}

// validFieldName reports whether s is an HTTP field name (RFC 9110 token).
func validFieldName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return s != ""
}
