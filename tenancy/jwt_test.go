package tenancy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/metadata"
)

var secret = strings.Repeat("k", 32)

func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWTTenant: the tenant is the verified token's claim; a token that
// does not verify is Unauthenticated, one without the claim has no tenant.
func TestJWTTenant(t *testing.T) {
	p := mustPolicy(t, Config{Key: "user_id", AdminAPIKeys: []string{"root"},
		JWT: JWTConfig{Claim: "tenant", HMACSecret: secret, Issuer: "auth.example", Audience: "memrank"}})
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).Unix()
	good := jwt.MapClaims{"tenant": "alice", "exp": exp, "iss": "auth.example", "aud": "memrank"}
	with := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{}
		for k, v := range good {
			c[k] = v
		}
		mod(c)
		return c
	}
	noneToken, err := jwt.NewWithClaims(jwt.SigningMethodNone, good).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		md     metadata.MD
		want   string
		err    error
		detail string
	}{
		{"bearer", metadata.Pairs("authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, []byte(secret), good)), "alice", nil, ""},
		{"api-key header", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS512, []byte(secret), good)), "alice", nil, ""},
		{"expired", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))), "", ErrUnauthenticated, "expired"},
		{"no expiry", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { delete(c, "exp") }))), "", ErrUnauthenticated, "required claim"},
		{"wrong secret", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(strings.Repeat("x", 32)), good)), "", ErrUnauthenticated, "bad signature"},
		{"alg none", metadata.Pairs("api-key", noneToken), "", ErrUnauthenticated, "invalid token"},
		{"wrong issuer", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["iss"] = "evil" }))), "", ErrUnauthenticated, "wrong issuer"},
		{"wrong audience", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["aud"] = "other" }))), "", ErrUnauthenticated, "wrong audience"},
		{"no claim", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { delete(c, "tenant") }))), "", ErrNoTenant, `"tenant" claim`},
		{"not a token", metadata.Pairs("api-key", "plain-key"), "", ErrUnauthenticated, "malformed"},
		{"two tenants", metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(secret), good),
			"authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["tenant"] = "bob" }))), "", ErrForbidden, "two tenants"},
		{"admin key", metadata.Pairs("api-key", "root"), "", ErrNoTenant, "administrator"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Tenant(tt.md)
			if got != tt.want || !errors.Is(err, tt.err) || tt.err == nil && err != nil || err != nil && !strings.Contains(err.Error(), tt.detail) {
				t.Fatalf("Tenant() = %q, %v; want %q, %v (%q)", got, err, tt.want, tt.err, tt.detail)
			}
		})
	}
	// Administration: the admin key, never a tenant's token.
	if err := p.Admin(metadata.Pairs("api-key", "root")); err != nil {
		t.Errorf("admin key: %v", err)
	}
	if err := p.Admin(metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, []byte(secret), good))); !errors.Is(err, ErrForbidden) {
		t.Errorf("a tenant's token as admin: %v", err)
	}
	if err := p.Admin(metadata.Pairs("api-key", "forged")); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("a bad token as admin: %v", err)
	}
}

// TestJWTPublicKeys: ES256 tokens verify against a PEM public key file;
// an HMAC token signed with that public key's bytes (the classic
// algorithm confusion) does not.
func TestJWTPublicKeys(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	path := filepath.Join(t.TempDir(), "keys.pem")
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	p := mustPolicy(t, Config{Key: "user_id", JWT: JWTConfig{Claim: "sub", PublicKeysFile: path}})
	claims := jwt.MapClaims{"sub": "carol", "exp": time.Now().Add(time.Hour).Unix()}
	if got, err := p.Tenant(metadata.Pairs("api-key", sign(t, jwt.SigningMethodES256, key, claims))); err != nil || got != "carol" {
		t.Errorf("ES256: %q, %v", got, err)
	}
	if _, err := p.Tenant(metadata.Pairs("api-key", sign(t, jwt.SigningMethodHS256, pemBytes, claims))); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("HS256 signed with the public key: %v", err)
	}
	if _, err := (JWTConfig{Claim: "sub", PublicKeysFile: filepath.Join(t.TempDir(), "none.pem")}).NewVerifier(); err == nil {
		t.Error("a missing key file was accepted")
	}
}

// FuzzJWTTenant: no input but a token signed with the secret yields a
// tenant, and nothing panics.
func FuzzJWTTenant(f *testing.F) {
	f.Add("eyJhbGciOiJIUzI1NiJ9.eyJ0ZW5hbnQiOiJhIn0.x")
	f.Add("a.b.c")
	f.Add("")
	v, err := (JWTConfig{Claim: "tenant", HMACSecret: secret}).NewVerifier()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		if got, err := v.Tenant(token); err == nil {
			t.Fatalf("%q gave tenant %q", token, got)
		}
	})
}

// TestJWTNumericTenant: a numeric tenant claim is read exactly, past 2^53
// too; one that is not an integer is no tenant.
func TestJWTNumericTenant(t *testing.T) {
	v, err := (JWTConfig{Claim: "tenant", HMACSecret: secret}).NewVerifier()
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]string{`9007199254740993`: "9007199254740993", `42`: "42", `4.5`: "", `1e3`: ""} {
		tok := sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"tenant": json.RawMessage(raw), "exp": time.Now().Add(time.Hour).Unix()})
		got, err := v.Tenant(tok)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("claim %s: %q, %v; want %q", raw, got, err, want)
		}
	}
}
