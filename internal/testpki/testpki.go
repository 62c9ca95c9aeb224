// Package testpki makes throwaway certificates for tests of TLS: a CA and
// the server and client certificates it signs, as PEM files.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a throwaway CA and the certificates it signs, as PEM files in
// Dir (the CA in ca.pem).
type PKI struct {
	Dir    string
	ca     *x509.Certificate
	key    *ecdsa.PrivateKey
	serial int64
}

// New makes a CA valid for an hour around now.
func New(t testing.TB) *PKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &PKI{Dir: t.TempDir(), ca: ca, key: key, serial: 1}
	p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

// write writes one PEM block to name in Dir.
func (p *PKI) write(t testing.TB, name, typ string, der []byte) {
	t.Helper()
	path := filepath.Join(p.Dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Leaf writes a certificate for 127.0.0.1 and memrank.test, named cn, into
// the files certName and keyName of Dir.
func (p *PKI) Leaf(t testing.TB, cn, certName, keyName string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"memrank.test"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, certName, "CERTIFICATE", der)
	p.write(t, keyName, "EC PRIVATE KEY", kder)
}

// Path is a file of Dir.
func (p *PKI) Path(name string) string { return filepath.Join(p.Dir, name) }
