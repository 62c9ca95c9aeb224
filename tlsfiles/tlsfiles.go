// Package tlsfiles turns certificate files into TLS configurations: a
// client's (trusting the system roots and, if given, a CA file; presenting
// a client certificate if given) for the upstream Qdrant, and a server's
// whose certificate is re-read when its files change, so that a renewed
// certificate (cert-manager, a mounted secret) is served without a
// restart.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/memrank/memrank/config/check"
)

// Client is the TLS of connections memrank makes: off unless Enabled.
type Client struct {
	Enabled bool `koanf:"enabled"`
	// CAFile holds PEM certificates trusted besides the system roots (a
	// private CA).
	CAFile string `koanf:"ca_file"`
	// CertFile and KeyFile are a client certificate, for an upstream that
	// asks for one (mutual TLS).
	CertFile string `koanf:"cert_file"`
	KeyFile  string `koanf:"key_file"`
	// ServerName overrides the name checked against the server's
	// certificate (default: the host dialled).
	ServerName string `koanf:"server_name"`
}

// Validate checks the section: files only with Enabled, a certificate and
// its key together.
func (c Client) Validate() error {
	var k check.Checker
	if !c.Enabled && (c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" || c.ServerName != "") {
		k.Add("enabled", "is false, yet certificates or a server name are set: set it to true, or remove them")
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		k.Add("cert_file", "and %s go together", check.Ref("key_file"))
	}
	return k.Err()
}

// Config is the client TLS configuration; nil when not Enabled. The files
// are read now: a missing or malformed one is an error at start.
func (c Client) Config() (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls: ca_file: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: ca_file %s: no PEM certificate in it", c.CAFile)
		}
		cfg.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Server is the TLS of memrank's own listeners: off while CertFile is
// empty.
type Server struct {
	CertFile string `koanf:"cert_file"`
	KeyFile  string `koanf:"key_file"`
}

// Validate checks that the certificate and its key come together.
func (s Server) Validate() error {
	var k check.Checker
	if (s.CertFile == "") != (s.KeyFile == "") {
		k.Add("cert_file", "and %s go together", check.Ref("key_file"))
	}
	return k.Err()
}

// Enabled says whether the listeners serve TLS.
func (s Server) Enabled() bool { return s.CertFile != "" }

// Reloader serves a certificate from files, re-reading them when their
// modification time changes (checked at most once per CheckEvery). A
// failed reload keeps the certificate it has and logs why.
type Reloader struct {
	certFile, keyFile string
	log               *slog.Logger
	checkEvery        time.Duration

	mu        sync.Mutex
	cert      *tls.Certificate
	certMod   time.Time
	keyMod    time.Time
	lastCheck time.Time
	lastWarn  time.Time
}

// NewReloader reads the files once: a missing or malformed one is an
// error at start.
func NewReloader(s Server, log *slog.Logger) (*Reloader, error) {
	if !s.Enabled() {
		return nil, errors.New("tls: no certificate configured")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Reloader{certFile: s.CertFile, keyFile: s.KeyFile, log: log, checkEvery: time.Second}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reloader) load() error {
	cm, err1 := modTime(r.certFile)
	km, err2 := modTime(r.keyFile)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("tls: server certificate: %w", err)
	}
	r.cert, r.certMod, r.keyMod = &cert, cm, km
	return nil
}

func modTime(path string) (time.Time, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// GetCertificate is tls.Config.GetCertificate.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.lastCheck) >= r.checkEvery {
		r.lastCheck = now
		cm, err1 := modTime(r.certFile)
		km, err2 := modTime(r.keyFile)
		if err1 == nil && err2 == nil && (!cm.Equal(r.certMod) || !km.Equal(r.keyMod)) {
			if err := r.load(); err != nil {
				// Tried again at the next check (a pair caught half-written
				// keeps its modification time when the write completes
				// within the clock's tick); said once a minute.
				if now.Sub(r.lastWarn) >= time.Minute {
					r.lastWarn = now
					r.log.Warn("TLS certificate not reloaded; serving the previous one", "error", err)
				}
			} else {
				r.log.Info("TLS certificate reloaded", "cert_file", r.certFile)
			}
		}
	}
	return r.cert, nil
}

// ServerConfig is a server TLS configuration serving r's certificate,
// offering h2 and http/1.1 (gRPC needs h2).
func (r *Reloader) ServerConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate, NextProtos: []string{"h2", "http/1.1"}}
}
