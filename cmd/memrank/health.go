package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type healthOptions struct {
	url, path string
	timeout   time.Duration
	insecure  bool
}

// newHealthCmd is a probe for images with no shell and no HTTP client
// (distroless): a container healthcheck runs the binary itself.
func newHealthCmd(e *env) *cobra.Command {
	var o healthOptions
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Probe a running memrank's /healthz or /readyz; exit 0 when it answers 200",
		Long: `GET --path (/readyz by default; /healthz says only that the process serves) on a running
memrank and exit 0 when it answers 200, 1 otherwise (the answer or the error on stderr). Without
--url the address is the configured listen.http on this machine ("https" when
listen.tls.cert_file is set), so in a container the same configuration serves and probes. It
is meant for container healthchecks on images without a shell or an HTTP client.`,
		Example: `  memrank health
  memrank health --path /healthz
  memrank health --url https://127.0.0.1:6333 --insecure`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHealth(cmd, e, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "memrank's HTTP address (default: listen.http on localhost)")
	f.StringVar(&o.path, "path", "/readyz", "the path to probe: /readyz or /healthz")
	f.DurationVar(&o.timeout, "timeout", 2*time.Second, "bound on the probe")
	f.BoolVar(&o.insecure, "insecure", false, "do not verify the server's certificate (a probe of the local listener)")
	return cmd
}

func runHealth(cmd *cobra.Command, e *env, o *healthOptions) error {
	if o.timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %v must be positive", o.timeout)}
	}
	if !strings.HasPrefix(o.path, "/") {
		return usageError{fmt.Errorf("--path %q must start with /", o.path)}
	}
	base := o.url
	if base == "" {
		c, err := e.loadConfig(cmd.Flags(), nil)
		if err != nil {
			return err
		}
		if _, _, err := net.SplitHostPort(c.Listen.HTTP); err != nil {
			return usageError{fmt.Errorf("listen.http %q: %w", c.Listen.HTTP, err)}
		}
		base = localURL(c.Listen.HTTP, c.Listen.TLS.CertFile != "")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Errorf("--url %q: want http://HOST:PORT or https://HOST:PORT", base)}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+o.path, nil)
	if err != nil {
		return usageError{err}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if o.insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a probe of the local listener, asked for
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: GET %s: %d %s", req.URL, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	_, err = fmt.Fprintf(e.stdout, "%s: ok\n", req.URL)
	return err
}
