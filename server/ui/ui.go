// Package ui serves the explain page: GET /ui on the HTTP port, a page on
// which a person asks a collection a question and sees every factor of
// every score as bars, a memory's audit history and the collection's stats.
//
// The page is static (index.html, app.js, style.css, embedded, no build
// step). It reads through routes that exist anyway, on the same origin and
// with the caller's own credentials: GET /collections and, for the texts
// of the left-out candidates, POST /collections/{name}/points (Qdrant's
// REST API), POST /v1/retrieve (explain, count_access false),
// GET /v1/memories/{id} and GET /v1/stats. So it can show nothing the
// caller could not already ask for, and tenancy and API keys apply to it
// unchanged; the files themselves hold no data and need no credential.
// A question can be linked: /ui?collection=C&q=TEXT opens the page on C
// and asks TEXT (the API key is never put in the URL).
//
// Every answer carries a Content-Security-Policy that admits only the
// page's own script, style and origin (no inline code, no framing), and
// nosniff, no-referrer and DENY framing headers; only GET and HEAD are
// served. Host and Origin checks (DNS rebinding, cross-site requests) are
// the job of the middleware around the whole HTTP port, not this package's.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/memrank/memrank/qdrantjson"
)

// Prefix is where the page is served: Prefix itself is the page, and
// Prefix+"/<file>" its assets.
const Prefix = "/ui"

// Routes are the patterns to mount Handler on.
func Routes() []string { return []string{Prefix, Prefix + "/"} }

// Config is the ui section of memrank's configuration.
type Config struct {
	// Enabled serves the page; false answers /ui like any unknown route
	// (the REST API's 404).
	Enabled bool `koanf:"enabled"`
}

// DefaultConfig serves the page.
func DefaultConfig() Config { return Config{Enabled: true} }

// Validate checks the section; a boolean has nothing to check, and the
// method makes the section a config.Validator like every other.
func (c Config) Validate() error { return nil }

//go:embed static
var static embed.FS

// csp admits the page's own files and same-origin requests only: no inline
// script or style (the page sets widths through the CSSOM, which CSP does
// not restrict), no plugins, no framing, no form posts anywhere, no <base>
// rewriting.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// types are the content types of the page's files, fixed here rather than
// read from the system's MIME tables, which differ between machines.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// asset is one embedded file, with what its answers need.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

// Handler serves the page.
type Handler struct {
	assets map[string]asset // by URL path: /ui, /ui/app.js, ...
}

var _ http.Handler = (*Handler)(nil)

// New reads the embedded files.
func New() (*Handler, error) {
	h := &Handler{assets: map[string]asset{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ctype, ok := types[path.Ext(p)]
		if !ok {
			return fmt.Errorf("%s: no content type for its extension", p)
		}
		sum := sha256.Sum256(b)
		a := asset{body: b, ctype: ctype, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
		name := strings.TrimPrefix(p, "static/")
		h.assets[Prefix+"/"+name] = a
		if name == "index.html" {
			h.assets[Prefix] = a
			h.assets[Prefix+"/"] = a
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ui: reading the embedded page: %w", err)
	}
	if _, ok := h.assets[Prefix]; !ok {
		return nil, fmt.Errorf("ui: the embedded page has no index.html")
	}
	return h, nil
}

// ServeHTTP answers GET and HEAD of the page and its assets.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		hd.Set("Cache-Control", "no-store")
		qdrantjson.WriteError(w, start, qdrantjson.Errorf(qdrantjson.ClassMethodNotAllowed, "%s %s: the explain page accepts GET and HEAD", r.Method, Prefix))
		return
	}
	a, ok := h.assets[r.URL.Path]
	if !ok {
		hd.Set("Cache-Control", "no-store")
		qdrantjson.WriteError(w, start, qdrantjson.Errorf(qdrantjson.ClassNotFound, "the explain page has no file %.100q", r.URL.Path))
		return
	}
	// Revalidated every time: a new memrank serves new files under the
	// same names, and a 304 costs nothing.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	hd.Set("Content-Type", a.ctype)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
