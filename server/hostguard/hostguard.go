// Package hostguard keeps other web sites out of memrank's HTTP port. A
// page in a person's browser may send requests to memrank in two ways the
// browser's same-origin policy does not stop: across origins (a form or a
// fetch that needs no preflight, whose side effects happen even if its
// answer cannot be read), and through DNS rebinding, where the attacker's
// own name is made to resolve to memrank's address, so that the browser
// takes memrank for the attacker's origin and lets the page read it.
//
// The guard refuses, with 403, any request that a browser sent from
// another origin: its Origin is not the Host it was sent to, or
// Sec-Fetch-Site says cross-site or same-site (except a plain navigation
// to a page).
//
// Against rebinding it checks the Host a request names. A rebinding
// attacker controls the name, never the address, so IP literals and
// localhost (and names under it) are always allowed, and other names must
// be listed in Config.AllowedHosts. Which requests are checked depends on
// whether the port needs a credential (Config.Open):
//
//   - On an open port (no credential needed) every request's Host is
//     checked. A rebinding page's same-origin GET carries no Origin, and a
//     browser sends no Fetch Metadata (Sec-Fetch-*) to a plain http origin
//     on a name other than localhost, so nothing but the Host tells the
//     attacker's requests apart from a client's.
//   - When every request needs a credential (API keys, tokens, the
//     embedded store's key), a rebinding page can read nothing, since it
//     never knows a valid key. Only requests with browser markers (Origin
//     or Sec-Fetch-Site) and requests for pages only browsers load
//     (Config.Pages: the explain page) are checked; other clients (Qdrant's
//     clients, the SDKs, MCP clients behind a proxy) reach it by any name.
//
// AllowedHosts ["*"] turns the Host check off, for a port behind something
// that checks Host itself (or whose operator accepts the risk); the Origin
// and Sec-Fetch-Site checks stay.
package hostguard

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/qdrantjson"
)

// Any is the AllowedHosts entry that allows every host name.
const Any = "*"

// maxLogged bounds the host names whose refusal is logged: the names are
// the senders' to choose, and an operator needs the first few only.
const maxLogged = 32

// Config says which Host names may reach memrank, and when they are
// checked.
type Config struct {
	// AllowedHosts are the names, besides localhost and IP addresses, that
	// may be used to reach memrank: "memrank.internal", or ".example.com"
	// for every name under example.com. Case does not matter; no ports.
	// ["*"] (alone) allows every name: the Host check is off.
	AllowedHosts []string
	// Pages are the path prefixes only browsers load (e.g. "/ui"): their
	// Host is checked even when the browser sent no fetch metadata.
	Pages []string
	// Open says the port serves requests that carry no credential: then
	// every request's Host is checked, not only browsers'.
	Open bool
	// Logger is told, once per host name (up to a bound), that requests
	// by a name not allowed were refused; nil: not logged.
	Logger *slog.Logger
	// Setting names, in refusals and logs, where the operator lists more
	// names; default "listen.allowed_hosts" (serve's configuration).
	Setting string
}

// Validate checks the allowed hosts: each a bare name (ValidHost), and "*"
// alone (ValidAny).
func (c Config) Validate() error {
	var k check.Checker
	for i, h := range c.AllowedHosts {
		if err := ValidHost(h); err != nil {
			k.Add(fmt.Sprintf("allowed_hosts[%d]", i), "%s", err)
		}
	}
	if err := ValidAny(c.AllowedHosts); err != nil {
		k.Add("allowed_hosts", "%s", err)
	}
	return k.Err()
}

// ValidHost checks one allowed host: "*", a name, or a name with a leading
// dot for every name under it; no scheme, port, path or other wildcard.
func ValidHost(h string) error {
	if h == Any {
		return nil
	}
	name := strings.TrimPrefix(h, ".")
	switch {
	case name == "":
		return errors.New("is empty")
	case strings.ContainsAny(name, ":/ *") || strings.Contains(name, ".."):
		return fmt.Errorf("%s is not a host name (no scheme, port, path or wildcard; a leading dot allows every name under it; \"*\" alone allows every name)", check.Quote(h))
	}
	return nil
}

// ValidAny checks that "*", which allows every name, is the only entry of
// hosts: beside it, other names would look as if they restricted
// something.
func ValidAny(hosts []string) error {
	for _, h := range hosts {
		if h == Any && len(hosts) > 1 {
			return errors.New(`"*" (every host name) must be the only entry`)
		}
	}
	return nil
}

// Guard checks requests; see the package doc. Safe for concurrent use.
type Guard struct {
	anyHost bool
	exact   map[string]bool
	suffix  []string // ".example.com"
	pages   []string
	open    bool
	log     *slog.Logger
	setting string

	mu       sync.Mutex
	logged   map[string]bool // host names whose refusal was logged
	silenced bool            // maxLogged reached, and said
}

// New builds the guard of c.
func New(c Config) (*Guard, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("hostguard: %w", err)
	}
	g := &Guard{exact: map[string]bool{}, pages: c.Pages, open: c.Open, log: c.Logger, logged: map[string]bool{}, setting: c.Setting}
	if g.setting == "" {
		g.setting = "listen.allowed_hosts"
	}
	if g.log == nil {
		g.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, h := range c.AllowedHosts {
		h = strings.ToLower(h)
		switch {
		case h == Any:
			g.anyHost = true
		case strings.HasPrefix(h, "."):
			g.suffix = append(g.suffix, h)
		default:
			g.exact[h] = true
		}
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
	browser := origin != "" || site != ""
	if !g.open && !browser && !g.page(r.URL.Path) {
		return nil // needs a credential a rebinding page cannot have
	}
	if host := hostName(r.Host); !g.allowedHost(host) {
		g.noteRefused(host)
		return fmt.Errorf("memrank was reached as %.100q, a host name it was not told it has (DNS rebinding protection): add it to %s (or use localhost or an IP address)", r.Host, g.setting)
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

// noteRefused logs the first refusal by each host name, so that an
// operator whose clients use a name memrank was not given sees why; the
// set is bounded, since anyone can send any name.
func (g *Guard) noteRefused(host string) {
	if len(host) > 253 { // the longest DNS name
		host = host[:253]
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.logged[host] || g.silenced:
		return
	case len(g.logged) == maxLogged:
		g.silenced = true
		g.log.Warn("requests by more host names were refused; no more are logged (DNS rebinding protection)", "logged", maxLogged)
		return
	}
	g.logged[host] = true
	g.log.Warn("refused requests by a host name memrank was not told it has (DNS rebinding protection): if it is memrank's, add it to "+g.setting,
		"host", host)
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

// hostName is the host name of a Host header: lower case, without port,
// brackets or a final dot.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
}

// allowedHost reports whether host (hostName's) names memrank: any name
// when "*" is allowed, an IP address, localhost (and names under it, which
// resolve to loopback), or a listed name.
func (g *Guard) allowedHost(host string) bool {
	switch {
	case g.anyHost:
		return true
	case host == "":
		// No Host at all (HTTP/1.0, a load balancer's health check): a
		// browser always sends one, so a rebinding page cannot send this.
		return true
	case net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") || g.exact[host]:
		return true
	}
	for _, s := range g.suffix {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}
