package storetest

import (
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

func testHealth(t *testing.T, target Target) {
	c := connect(t, target)
	reply, err := c.HealthCheck(opContext(t))
	if err != nil {
		t.Fatalf("health check: %v", err)
	}
	// Qdrant answers title "qdrant - vector search engine"; another store names itself.
	if reply.GetTitle() == "" {
		t.Errorf("health check title is empty")
	}
	// go-client's compatibility check parses the version as x.y[.z] and warns on every
	// connection when it cannot.
	if _, err := qdrant.ParseVersion(reply.GetVersion()); err != nil {
		t.Errorf("health check version %q: %v", reply.GetVersion(), err)
	}
}
