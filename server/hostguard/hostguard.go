// Package hostguard keeps other web sites out of memrank's HTTP port. A
// page in a person's browser may send requests to memrank in two ways the
// browser's same-origin policy does not stop: across origins (a form or a
// fetch that needs no preflight, whose side effects happen even if its
// answer cannot be read), and through DNS rebinding, where the attacker's
// own name is made to resolve to memrank's address, so that the browser
// takes memrank for the attacker's origin and lets the page read it.
//
// The guard refuses, with 403, any request that a browser sent from
// another origin (its Origin is not the Host it was sent to, or
// Sec-Fetch-Site says cross-site or same-site, except a plain navigation),
// and any browser request, or any request for a page only browsers load
// (Config.Pages: the explain page), addressed to a Host name memrank was
// not told it has: a rebinding attacker controls the name, never the
// address, so IP literals and localhost are always allowed, and other names
// must be listed in Config.AllowedHosts. Clients that are not browsers
// (Qdrant's clients, the SDKs, MCP clients) send neither Origin nor
// Sec-Fetch-Site and are not affected.
package hostguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/qdrantjson"
)

// Config says which Host names browsers may use.
type Config struct {
	// AllowedHosts are the names, besides localhost and IP addresses, that
	// browsers may use to reach memrank: "memrank.internal", or
	// ".example.com" for every name under example.com. Case does not
	// matter; no ports.
	AllowedHosts []string
	// Pages are the path prefixes only browsers load (e.g. "/ui"): their
	// Host is checked even when the browser sent no fetch metadata.
	Pages []string
}

// Validate checks that every allowed host is a bare name (ValidHost).
func (c Config) Validate() error {
	var k check.Checker
	for i, h := range c.AllowedHosts {
		if err := ValidHost(h); err != nil {
			k.Add(fmt.Sprintf("allowed_hosts[%d]", i), "%s", err)
		}
	}
	return k.Err()
}

// ValidHost checks one allowed host: a name, or a name with a leading dot
// for every name under it; no scheme, port, path or wildcard.
func ValidHost(h string) error {
	name := strings.TrimPrefix(h, ".")
	switch {
	case name == "":
		return errors.New("is empty")
	case strings.ContainsAny(name, ":/ *") || strings.Contains(name, ".."):
		return fmt.Errorf("%s is not a host name (no scheme, port, path or wildcard; a leading dot allows every name under it)", check.Quote(h))
	}
	return nil
}

// Guard checks requests; see the package doc.
type Guard struct {
	exact  map[string]bool
	suffix []string // ".example.com"
	pages  []string
}

// New builds the guard of c.
func New(c Config) (*Guard, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("hostguard: %w", err)
	}
	g := &Guard{exact: map[string]bool{}, pages: c.Pages}
	for _, h := range c.AllowedHosts {
		h = strings.ToLower(h)
		if strings.HasPrefix(h, ".") {
			g.suffix = append(g.suffix, h)
			continue
		}
		g.exact[h] = true
	}
	return g, nil
}

// Handler refuses what Check refuses and passes the rest to next.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			qdrantjson.WriteError(w, time.Now(), qdrantjson.Errorf(qdrantjson.ClassForbidden, "%s", err.Error()))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Check returns why r is refused, nil when it is not; the text is meant
// for the caller.
func (g *Guard) Check(r *http.Request) error {
	origin := r.Header.Get("Origin")
	site := r.Header.Get("Sec-Fetch-Site")
	if origin == "" && site == "" && !g.page(r.URL.Path) {
		return nil // not a browser
	}
	if !g.allowedHost(r.Host) {
		return fmt.Errorf("a browser reached memrank as %q, a name it was not told it has (DNS rebinding protection): add it to listen.allowed_hosts, or use localhost or an IP address", r.Host)
	}
	if origin != "" {
		u, err := url.Parse(origin)
		if origin == "null" || err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Errorf("a request from the page of another origin (%.100s) is refused", origin)
		}
	}
	switch site {
	case "", "same-origin", "none": // "none": typed or bookmarked by the person
		return nil
	case "same-site", "cross-site":
		// A link to the page may be followed; nothing else from another
		// site may be done, not even a read whose answer it cannot see.
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.Header.Get("Sec-Fetch-Mode") == "navigate" && g.page(r.URL.Path) {
			return nil
		}
	}
	return fmt.Errorf("a request from another site (Sec-Fetch-Site: %.20s) is refused", site)
}

// page reports whether path is one of the browser-only pages.
func (g *Guard) page(path string) bool {
	for _, p := range g.pages {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// allowedHost reports whether hostport names memrank: an IP address,
// localhost (and names under it, which resolve to loopback), or a listed
// name.
func (g *Guard) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") || g.exact[host] {
		return true
	}
	for _, s := range g.suffix {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}
