package native

import (
	"strings"
	"testing"
	"time"
)

// TestRetrieveAt: "at" is an optional RFC 3339 time, read as UTC; anything
// else is refused naming the field.
func TestRetrieveAt(t *testing.T) {
	tests := []struct {
		name, at string
		want     time.Time
		err      string
	}{
		{name: "absent", at: ``},
		{name: "null", at: `,"at":null`},
		{name: "UTC", at: `,"at":"2026-06-01T00:00:00Z"`, want: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)},
		{name: "an offset, read as UTC", at: `,"at":"2026-06-01T02:30:00+02:00"`, want: time.Date(2026, 6, 1, 0, 30, 0, 0, time.UTC)},
		{name: "fractions", at: `,"at":"2026-06-01T00:00:00.25Z"`, want: time.Date(2026, 6, 1, 0, 0, 0, 250e6, time.UTC)},
		{name: "a date only", at: `,"at":"2026-06-01"`, err: "at: want an RFC 3339 time"},
		{name: "words", at: `,"at":"yesterday"`, err: "at: want an RFC 3339 time"},
		{name: "a number", at: `,"at":1780000000`, err: "at: want an RFC 3339 time"},
		{name: "year 0", at: `,"at":"0000-01-01T00:00:00Z"`, err: "at: want an RFC 3339 time"},
		{name: "before year 1 in UTC", at: `,"at":"0001-01-01T00:00:00+01:00"`, err: "at: want an RFC 3339 time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeRetrieveRequest([]byte(`{"collection":"mem","vector":[1,0]` + tt.at + `}`))
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case !req.At.Equal(tt.want) || (!tt.want.IsZero() && req.At.Location() != time.UTC):
				t.Errorf("at %v, want %v", req.At, tt.want)
			}
		})
	}
}
