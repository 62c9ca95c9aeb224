// Package restapi is memrank's Qdrant REST front: it accepts Qdrant's REST
// JSON (what the Python and JS clients, curl scripts and the Qdrant web UI's
// API calls send), translates each request to the go-client request proto,
// calls the typed gRPC stubs it is given, and writes the answer back in
// Qdrant's REST shapes and envelope ({"result","status":"ok","time"};
// errors {"status":{"error"},"time"} with Qdrant's HTTP codes).
//
// It is a pure translation layer. Re-ranking, tenancy and forwarding to
// Qdrant happen behind the stubs: in `memrank serve` they point at memrank's
// own gRPC front (in process), in `memrank qdrant-compat` at the embedded
// store directly. The caller's api-key and authorization headers (and any
// configured extra headers) travel as outgoing gRPC metadata, and the
// request's deadline bounds every stub call.
//
// # Fidelity
//
// Bodies are parsed, and payloads, filters, point ids, the envelope and
// errors read and written, with package qdrantjson (shared with the native
// API), so that point ids above 2^53 keep every digit, payload integers stay
// integers and floats stay floats (3 and 3.0 are different values to
// Qdrant's filters; a float is always written back with a fraction or
// exponent), scores and vector components are written in their shortest
// float32 form (0.9, not 0.8999999761581421), invalid UTF-8 is refused, as
// serde_json refuses it, and every error is answered from one table. Defaults follow Qdrant: query limit 10, groups limit 10 and
// group_size 3, scroll limit 10 with payload, retrieve and search without
// payload, count exact.
//
// Qdrant ignores unknown fields in most bodies; this front does not,
// because an unknown field may be a feature that translation would silently
// drop. Such a request (and any body form or route the front does not
// translate) is forwarded raw to Config.UpstreamREST when one is set, and
// otherwise answered with a Qdrant-shaped 400 (field) or 404 (route) that
// names it.
package restapi
