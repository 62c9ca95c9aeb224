package qdrantjson

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadBodyContentType: a body is JSON only when the request says so, so
// that a web page cannot write to a memrank on loopback with a
// cross-origin "simple" request (text/plain, a form, or no type).
func TestReadBodyContentType(t *testing.T) {
	for _, tt := range []struct {
		name, ct, body string
		ok             bool
	}{
		{"json", "application/json", `{}`, true},
		{"json with charset", "application/json; charset=utf-8", `{}`, true},
		{"upper case", "Application/JSON", `{}`, true},
		{"json suffix", "application/vnd.api+json", `{}`, true},
		{"no body, no type", "", ``, true},
		{"no type", "", `{}`, false},
		{"text", "text/plain;charset=UTF-8", `{}`, false},
		{"form", "application/x-www-form-urlencoded", `{}`, false},
		{"multipart", "multipart/form-data; boundary=x", `{}`, false},
		{"malformed", "application/json;;", `{}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(tt.body))
			if tt.ct != "" {
				r.Header.Set("Content-Type", tt.ct)
			}
			_, err := ReadBody(httptest.NewRecorder(), r, 1<<20)
			if (err == nil) != tt.ok {
				t.Fatalf("ReadBody: %v, want ok=%v", err, tt.ok)
			}
			if err != nil && (Classify(err).Status != http.StatusBadRequest || !strings.Contains(err.Error(), "Content-Type: application/json")) {
				t.Errorf("answer %+v", Classify(err))
			}
		})
	}
}
