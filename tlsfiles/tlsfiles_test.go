package tlsfiles

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/internal/testpki"
)

// serve answers TLS handshakes on loopback with cfg and reports the
// certificate's common name to each client.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Write([]byte("x"))
			}()
		}
	}()
	return lis.Addr().String()
}

func commonName(t *testing.T, addr string, cfg *tls.Config) (string, error) {
	t.Helper()
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
}

// TestClientAndReload: a client trusting the CA file reaches a server of
// that CA, one without it does not; a renewed server certificate is served
// without a restart, and a broken one leaves the previous in place.
func TestClientAndReload(t *testing.T) {
	p := testpki.New(t)
	p.Leaf(t, "first", "server.pem", "server-key.pem")
	r, err := NewReloader(Server{CertFile: filepath.Join(p.Dir, "server.pem"), KeyFile: filepath.Join(p.Dir, "server-key.pem")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.checkEvery = 0
	addr := serve(t, r.ServerConfig())

	trusting, err := Client{Enabled: true, CAFile: filepath.Join(p.Dir, "ca.pem")}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cn, err := commonName(t, addr, trusting); err != nil || cn != "first" {
		t.Fatalf("with the CA: %q, %v", cn, err)
	}
	plain, _ := Client{Enabled: true}.Config()
	if _, err := commonName(t, addr, plain); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v", err)
	}

	time.Sleep(10 * time.Millisecond) // a distinct modification time
	p.Leaf(t, "second", "server.pem", "server-key.pem")
	if cn, err := commonName(t, addr, trusting); err != nil || cn != "second" {
		t.Errorf("after renewal: %q, %v", cn, err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(p.Dir, "server.pem"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cn, err := commonName(t, addr, trusting); err != nil || cn != "second" {
		t.Errorf("after a broken renewal: %q, %v", cn, err)
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"client off", Client{}.Validate(), ""},
		{"client files while off", Client{CAFile: "x"}.Validate(), "enabled: is false"},
		{"client cert without key", Client{Enabled: true, CertFile: "c"}.Validate(), "cert_file: and key_file go together"},
		{"server off", Server{}.Validate(), ""},
		{"server key without cert", Server{KeyFile: "k"}.Validate(), "cert_file: and key_file go together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.err == nil) != (tt.want == "") || tt.err != nil && !strings.Contains(tt.err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", tt.err, tt.want)
			}
		})
	}
	if _, err := (Client{Enabled: true, CAFile: "/nonexistent"}).Config(); err == nil {
		t.Error("a missing CA file was accepted")
	}
	if _, err := NewReloader(Server{CertFile: "/nonexistent", KeyFile: "/nonexistent"}, nil); err == nil {
		t.Error("a missing certificate was accepted")
	}
}
