package ui

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/memory"
)

func newHandler(t *testing.T) *Handler {
	t.Helper()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestServe: the page and its assets by GET and HEAD, with their types;
// every other method 405; unknown files 404.
func TestServe(t *testing.T) {
	h := newHandler(t)
	tests := []struct {
		name, method, path string
		code               int
		ctype              string
		body               string // a piece of the body
	}{
		{"the page", http.MethodGet, "/ui", 200, "text/html; charset=utf-8", `<script type="module" src="/ui/app.js">`},
		{"the page with a slash", http.MethodGet, "/ui/", 200, "text/html; charset=utf-8", "<title>memrank"},
		{"the page by name", http.MethodGet, "/ui/index.html", 200, "text/html; charset=utf-8", "<title>memrank"},
		{"script", http.MethodGet, "/ui/app.js", 200, "text/javascript; charset=utf-8", "count_access: false"},
		{"style", http.MethodGet, "/ui/style.css", 200, "text/css; charset=utf-8", ".factor"},
		{"icon", http.MethodGet, "/ui/favicon.svg", 200, "image/svg+xml", "<svg"},
		{"head", http.MethodHead, "/ui", 200, "text/html; charset=utf-8", ""},
		{"post", http.MethodPost, "/ui", 405, "application/json", "accepts GET and HEAD"},
		{"put an asset", http.MethodPut, "/ui/app.js", 405, "application/json", "accepts GET and HEAD"},
		{"delete", http.MethodDelete, "/ui", 405, "application/json", ""},
		{"options", http.MethodOptions, "/ui", 405, "application/json", ""},
		{"unknown file", http.MethodGet, "/ui/secret.txt", 404, "application/json", "no file"},
		{"directory", http.MethodGet, "/ui/static/app.js", 404, "application/json", "no file"},
		{"traversal", http.MethodGet, "/ui/../go.mod", 404, "application/json", "no file"},
		{"no prefix", http.MethodGet, "/app.js", 404, "application/json", "no file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(h, tc.method, tc.path)
			if rec.Code != tc.code {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.path, rec.Code, rec.Body, tc.code)
			}
			if got := rec.Header().Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			if !strings.Contains(rec.Body.String(), tc.body) {
				t.Errorf("body lacks %q:\n%.300s", tc.body, rec.Body)
			}
			if tc.method == http.MethodHead && rec.Body.Len() != 0 {
				t.Errorf("HEAD answered a body of %d bytes", rec.Body.Len())
			}
			if tc.code == 405 {
				if got := rec.Header().Get("Allow"); got != "GET, HEAD" {
					t.Errorf("Allow %q", got)
				}
			}
		})
	}
}

// TestSecurityHeaders: every answer, error or not, carries them.
func TestSecurityHeaders(t *testing.T) {
	h := newHandler(t)
	want := map[string]string{
		"Content-Security-Policy":      csp,
		"X-Content-Type-Options":       "nosniff",
		"Referrer-Policy":              "no-referrer",
		"X-Frame-Options":              "DENY",
		"Cross-Origin-Opener-Policy":   "same-origin",
		"Cross-Origin-Resource-Policy": "same-origin",
	}
	for _, tc := range []struct{ name, method, path, cache string }{
		{"page", http.MethodGet, "/ui", "no-cache"},
		{"asset", http.MethodGet, "/ui/app.js", "no-cache"},
		{"not found", http.MethodGet, "/ui/nope", "no-store"},
		{"wrong method", http.MethodPost, "/ui", "no-store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(h, tc.method, tc.path)
			got := map[string]string{}
			for k := range want {
				got[k] = rec.Header().Get(k)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if c := rec.Header().Get("Cache-Control"); c != tc.cache {
				t.Errorf("Cache-Control %q, want %q", c, tc.cache)
			}
		})
	}
}

// TestCSP: the policy admits only this origin, and nothing inline.
func TestCSP(t *testing.T) {
	for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
		"frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(csp, d+";") && !strings.HasSuffix(csp, d) {
			t.Errorf("CSP lacks %q: %s", d, csp)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*", "data:", "http:", "https:"} {
		if strings.Contains(csp, bad) {
			t.Errorf("CSP admits %q: %s", bad, csp)
		}
	}
}

// TestRevalidation: an unchanged file answers 304 to its ETag.
func TestRevalidation(t *testing.T) {
	h := newHandler(t)
	first := serve(h, http.MethodGet, "/ui/app.js")
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	for _, tc := range []struct {
		name, tag string
		code      int
	}{
		{"same", etag, http.StatusNotModified},
		{"other", `"something-else"`, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rec := serve(h, http.MethodGet, "/ui/app.js", "If-None-Match", tc.tag); rec.Code != tc.code {
				t.Errorf("If-None-Match %s: %d, want %d", tc.tag, rec.Code, tc.code)
			}
		})
	}
	if other := serve(h, http.MethodGet, "/ui/style.css").Header().Get("ETag"); other == etag {
		t.Error("two files share an ETag")
	}
}

// TestPageReferences: what index.html loads is served, from /ui, and it
// has no inline script or style (the CSP would refuse them).
func TestPageReferences(t *testing.T) {
	h := newHandler(t)
	page := serve(h, http.MethodGet, "/ui").Body.String()
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("index.html references %d files", len(refs))
	}
	for _, m := range refs {
		if !strings.HasPrefix(m[1], Prefix+"/") {
			t.Errorf("index.html references %q, outside %s/", m[1], Prefix)
			continue
		}
		if rec := serve(h, http.MethodGet, m[1]); rec.Code != http.StatusOK {
			t.Errorf("index.html references %s: %d", m[1], rec.Code)
		}
	}
	for _, inline := range []string{"<style", " style=", "<script>", " onclick=", " onload=", " onsubmit=", "javascript:"} {
		if strings.Contains(page, inline) {
			t.Errorf("index.html has inline %q", inline)
		}
	}
}

// TestScriptWritesNoHTML: the script puts server strings in the page as
// text only; none of the sinks that parse HTML or code appear in it.
func TestScriptWritesNoHTML(t *testing.T) {
	h := newHandler(t)
	js := serve(h, http.MethodGet, "/ui/app.js").Body.String()
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute(\"on", "srcdoc"} {
		if strings.Contains(js, sink) {
			t.Errorf("app.js uses %s", sink)
		}
	}
	// It calls memrank's read routes on this origin, by absolute path, and
	// nothing else.
	calls := regexp.MustCompile("\\bapi\\(\\s*[`\"]([^`\"?$]*)").FindAllStringSubmatch(js, -1)
	var got []string
	for _, m := range calls {
		got = append(got, m[1])
	}
	want := []string{"/collections", "/v1/stats", "/collections/", "/v1/retrieve", "/v1/memories/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("app.js's calls (-want +got):\n%s", diff)
	}
	if n := strings.Count(js, "fetch("); n != 1 {
		t.Errorf("app.js calls fetch %d times, want once (in api)", n)
	}
}

func TestConfig(t *testing.T) {
	if !DefaultConfig().Enabled {
		t.Error("the page is off by default")
	}
	for _, c := range []Config{DefaultConfig(), {}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestRoutes(t *testing.T) {
	if diff := cmp.Diff([]string{"/ui", "/ui/"}, Routes()); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
}

// TestPickerHidesCompanions: the collection picker leaves out memrank's own
// collections by the rule memory.IsCompanion applies (audit, backfill and
// re-embedding companions), not by the audit suffix alone.
func TestPickerHidesCompanions(t *testing.T) {
	js := serve(newHandler(t), http.MethodGet, "/ui/app.js").Body.String()
	m := regexp.MustCompile(`const COMPANION_SUFFIXES = \[([^\]]*)\];`).FindStringSubmatch(js)
	if m == nil {
		t.Fatal("app.js has no COMPANION_SUFFIXES list")
	}
	var suffixes []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(m[1], -1) {
		suffixes = append(suffixes, q[1])
	}
	if !strings.Contains(js, ".filter((n) => !isCompanion(n))") {
		t.Error("the picker does not filter its names with isCompanion")
	}
	for _, name := range []string{
		"notes" + memory.AuditSuffix, "notes" + memory.BackfillSuffix, "notes" + memory.ReembedSuffix,
		"notes", "dana_memories", "memrank_audit_notes", "notes_memrank",
	} {
		hidden := slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(name, s) })
		if hidden != memory.IsCompanion(name) {
			t.Errorf("%q: app.js hides it: %v; memory.IsCompanion: %v", name, hidden, memory.IsCompanion(name))
		}
	}
}

// funcBody is the source of the named top-level function of app.js, up to
// the next top-level declaration.
func funcBody(t *testing.T, js, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?ms)^(?:async )?function ` + name + `\(.*?^}\n`).FindString(js)
	if m == "" {
		t.Fatalf("app.js has no function %s", name)
	}
	return m
}

// cssRule is the declarations of a rule of style.css, by its exact selector.
func cssRule(t *testing.T, css, selector string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(selector) + ` \{([^}]*)\}`).FindStringSubmatch(css)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestPageBehaviour: what the explain page does, read from the files it is
// served: a question is linked by its URL, the stats panel has a loading
// and an error state, the guard's report is styled as information, and
// the left-out candidates' texts are read by id. test/ui/explain.mjs
// checks the same in a browser.
func TestPageBehaviour(t *testing.T) {
	h := newHandler(t)
	js := serve(h, http.MethodGet, "/ui/app.js").Body.String()
	css := serve(h, http.MethodGet, "/ui/style.css").Body.String()
	tests := []struct {
		name string
		in   string // the source the pieces must be in
		want []string
		not  []string
	}{
		{"the link is read on load", funcBody(t, js, "linked"),
			[]string{"new URLSearchParams(location.search)", `u.get("collection")`, `u.get("q")`}, nil},
		{"the linked question is asked once the collections are listed", funcBody(t, js, "loadCollections"),
			[]string{"const link = linked();", "sel.value = link.collection", "$(\"question\").value = link.q;", "ask();"}, nil},
		{"the link is written with replaceState, never with the key", funcBody(t, js, "setLink"),
			[]string{`u.set("collection", collection)`, `u.set("q", q)`, "history.replaceState(null, \"\", "},
			[]string{"KEY_STORE", "api-key", "sessionStorage", "pushState"}},
		{"asking updates the link", funcBody(t, js, "ask"), []string{"setLink(collection, text, limit, "}, nil},
		{"stats: a loading state that names the collection, then ready", funcBody(t, js, "loadStats"),
			[]string{`body.dataset.state = "loading"`, "Counting the memories of ", `body.dataset.state = "ready"`}, []string{`"Loading…"`}},
		{"stats: an error state that says why and retries", funcBody(t, js, "loadStats"),
			[]string{`body.dataset.state = "error"`, `id: "stats-retry"`, "loadStats(collection)", "errorText(err)"}, nil},
		{"the guard's report is information", funcBody(t, js, "renderSummary"),
			[]string{`class: "chip info", id: "guard-report"`}, []string{"chip guard"}},
		{"left out: texts read by id, the text keys only", funcBody(t, js, "fillDroppedTexts"),
			[]string{"api(`/collections/${encodeURIComponent(collection)}/points`", `method: "POST"`, `with_payload: ["text", "page_content"]`,
				"truncate(text, DROPPED_TEXT_CHARS)", "cell.title = text"}, nil},
		{"left out: each row shows the id and its text", funcBody(t, js, "renderDropped"),
			[]string{`el("code", { text: id }), " ", text)`, "fillDroppedTexts(collection, "}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				if !strings.Contains(tc.in, w) {
					t.Errorf("lacks %q in:\n%s", w, tc.in)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(tc.in, n) {
					t.Errorf("has %q in:\n%s", n, tc.in)
				}
			}
		})
	}

	// The guard's colours are not an error's or a warning's.
	info := cssRule(t, css, ".chip.info")
	if info == "" {
		t.Fatal("style.css has no .chip.info rule")
	}
	colour := regexp.MustCompile(`#[0-9a-fA-F]{6}`)
	for _, sel := range []string{".error", ".error-inline", ".chip.warn"} {
		for _, c := range colour.FindAllString(cssRule(t, css, sel), -1) {
			if strings.Contains(info, c) {
				t.Errorf(".chip.info shares %s with %s", c, sel)
			}
		}
	}
	if cssRule(t, css, ".chip.guard") != "" {
		t.Error("style.css still styles .chip.guard")
	}
}
