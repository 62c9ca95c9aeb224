package check

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{time.Hour, "1h"},
		{2 * time.Minute, "2m"},
		{90 * time.Minute, "1h30m"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{10 * time.Minute, "10m"},
		{1500 * time.Millisecond, "1.5s"},
		{-time.Hour, "-1h"},
		{250 * time.Microsecond, "250µs"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := Duration(tt.d)
			if got != tt.want {
				t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
			}
			if back, err := time.ParseDuration(got); err != nil || back != tt.d {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v", got, back, err, tt.d)
			}
		})
	}
}
