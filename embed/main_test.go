package embed

import (
	"testing"

	"go.uber.org/goleak"
)

// The cache's shared calls and the driver's HTTP connections must all end
// with the tests that start them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
