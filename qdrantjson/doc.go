// Package qdrantjson is Qdrant's REST JSON as memrank speaks it, in one
// place for both HTTP fronts (server/restapi and server/native) and for the
// tools that read or write payloads as JSON (memory, dedup, internal/eval,
// cmd/memrank, examples/demo):
//
//   - a strict JSON parser (Parse) that keeps numbers as their literal text,
//     so u64 point ids above 2^53 keep every digit and a payload's 3 and 3.0
//     stay an integer and a float, refuses invalid UTF-8 and lone surrogates
//     as serde_json does, and reports positions in serde_json's words; and
//     the checked-object helpers the decoders are written with (ReadObject,
//     Object, U64, PointID, ...);
//   - the payload codec: JSON <-> map[string]*qdrant.Value (Payload,
//     DecodePayload, AppendPayload);
//   - the filter codec: Qdrant's REST filter JSON -> *qdrant.Filter (Filter,
//     DecodeFilter);
//   - the response envelope: {"result", "status": "ok", "time"} and
//     {"status": {"error"}, "time"} (WriteResult, WriteError);
//   - the one table from an error (an upstream gRPC status, or a refusal of
//     type *Error) to the HTTP status and the text a client reads, in
//     Qdrant's words (Classify).
//
// It is a leaf: it imports the go-client protos and gRPC's status codes,
// never memrank's rank, dedup, store or cmd, so that packages below the
// fronts may use the payload codec too.
package qdrantjson
