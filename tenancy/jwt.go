package tenancy

import (
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/memrank/memrank/config/check"
)

// JWTConfig takes tenants from a verified JWT: the caller sends a token
// (Authorization: Bearer, or the api-key header, as Qdrant's clients do)
// and the tenant is one of its claims. The signature is checked against
// the configured keys, the expiry is required, and issuer and audience
// are checked when set. Off while Claim is empty.
type JWTConfig struct {
	// Claim is the claim holding the tenant (e.g. "tenant" or "sub"); a
	// string, or an integer with tenancy integer values.
	Claim string `koanf:"claim"`
	// HMACSecret verifies HS256/384/512 tokens; PublicKeysFile (PEM: RSA,
	// ECDSA or Ed25519 public keys or certificates) verifies RS*, PS*, ES*
	// and EdDSA tokens. Exactly one.
	HMACSecret     string `koanf:"hmac_secret" secret:"true"`
	PublicKeysFile string `koanf:"public_keys_file"`
	Issuer         string `koanf:"issuer"`
	Audience       string `koanf:"audience"`
}

// Enabled says whether tenants come from tokens.
func (c JWTConfig) Enabled() bool { return c.Claim != "" }

// Validate checks the section.
func (c JWTConfig) Validate() error {
	var k check.Checker
	set := c.HMACSecret != "" || c.PublicKeysFile != "" || c.Issuer != "" || c.Audience != ""
	switch {
	case !c.Enabled() && set:
		k.Add("claim", "must be set when keys, an issuer or an audience are")
	case c.Enabled() && (c.HMACSecret == "") == (c.PublicKeysFile == ""):
		k.Add("hmac_secret", "set exactly one of it and %s, to check the tokens' signatures", check.Ref("public_keys_file"))
	}
	if c.HMACSecret != "" {
		k.Secret("hmac_secret", c.HMACSecret)
		if len(c.HMACSecret) < 32 {
			k.Add("hmac_secret", "is shorter than 32 bytes (value not shown): a short secret can be guessed offline from one token")
		}
	}
	return k.Err()
}

// JWTVerifier checks tokens and reads their tenant claim.
type JWTVerifier struct {
	claim  string
	keys   jwt.VerificationKeySet
	parser *jwt.Parser
}

// leeway is Qdrant's for exp (src/common/auth/jwt_parser.rs).
const leeway = 30 * time.Second

// NewVerifier loads the keys; nil when tokens are off.
func (c JWTConfig) NewVerifier() (*JWTVerifier, error) {
	if !c.Enabled() {
		return nil, nil
	}
	// Numbers as json.Number: a numeric tenant past 2^53 must not round
	// onto another tenant's id.
	opts := []jwt.ParserOption{jwt.WithExpirationRequired(), jwt.WithLeeway(leeway), jwt.WithJSONNumber()}
	v := &JWTVerifier{claim: c.Claim}
	if c.HMACSecret != "" {
		v.keys.Keys = []jwt.VerificationKey{[]byte(c.HMACSecret)}
		opts = append(opts, jwt.WithValidMethods([]string{"HS256", "HS384", "HS512"}))
	} else {
		keys, err := publicKeys(c.PublicKeysFile)
		if err != nil {
			return nil, err
		}
		v.keys.Keys = keys
		opts = append(opts, jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}))
	}
	if c.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(c.Issuer))
	}
	if c.Audience != "" {
		opts = append(opts, jwt.WithAudience(c.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// publicKeys reads every public key (or certificate's key) of a PEM file.
func publicKeys(path string) ([]jwt.VerificationKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenancy: jwt.public_keys_file: %w", err)
	}
	var keys []jwt.VerificationKey
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		var key crypto.PublicKey
		switch blk.Type {
		case "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(blk.Bytes)
		case "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(blk.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(blk.Bytes); err == nil {
				key = cert.PublicKey
			}
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tenancy: jwt.public_keys_file %s: %w", path, err)
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("tenancy: jwt.public_keys_file %s: no public key in it", path)
	}
	return keys, nil
}

// Tenant verifies token and returns its tenant claim. Its errors say why
// the token was refused, never the token.
func (v *JWTVerifier) Tenant(token string) (string, error) {
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return v.keys, nil }); err != nil {
		return "", fmt.Errorf("%w: invalid token (%s)", ErrUnauthenticated, tokenProblem(err))
	}
	switch t := claims[v.claim].(type) {
	case string:
		if t != "" {
			return t, nil
		}
	case json.Number:
		if n, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
	}
	return "", fmt.Errorf("%w: the token has no %q claim with a tenant", ErrNoTenant, v.claim)
}

// tokenProblem names why a token failed, in words safe to show.
func tokenProblem(err error) string {
	for _, p := range []struct {
		err  error
		text string
	}{
		{jwt.ErrTokenExpired, "expired"},
		{jwt.ErrTokenRequiredClaimMissing, "a required claim is missing (exp)"},
		{jwt.ErrTokenNotValidYet, "not valid yet"},
		{jwt.ErrTokenInvalidIssuer, "wrong issuer"},
		{jwt.ErrTokenInvalidAudience, "wrong audience"},
		{jwt.ErrTokenSignatureInvalid, "bad signature"},
		{jwt.ErrTokenUnverifiable, "cannot be verified with the configured keys"},
		{jwt.ErrTokenMalformed, "malformed"},
	} {
		if errors.Is(err, p.err) {
			return p.text
		}
	}
	return "rejected"
}
