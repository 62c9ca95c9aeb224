// Package upstream is how memrank talks gRPC with the Qdrant it fronts and
// with itself: the upstream section of the configuration (where Qdrant is,
// memrank's own key, the deadline of a request that has none), dialing the
// upstream for the gRPC front's forwarding and for go-client, serving a gRPC
// server in process (the embedded store, the front for the REST front's
// typed stubs) and stopping a gRPC server gracefully with a deadline.
//
// The upstream is either a Qdrant gRPC address (Dial, ClientConfig) or a
// gRPC server in the same process (ServeInProcess, then DialInProcess and
// the InProcess's ClientConfig), reached through the real gRPC stack over an
// in-memory listener. Keepalive parameters are functions, not variables,
// so no caller can change every connection's.
package upstream
