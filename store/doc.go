// Package store is memrank's embedded vector engine: collections of points
// persisted in a local data directory, searched exactly, and served over
// Qdrant's gRPC protocol so that memrank (and every test of the project)
// talks to it with the official go-client exactly as it talks to a real
// Qdrant. It is not Qdrant and says so in its HealthCheck title.
//
// # Model
//
// A collection has one unnamed dense vector per point (Cosine, Dot, Euclid
// or Manhattan) and a JSON payload. Point ids are unsigned integers or
// UUIDs. Payload values are go-client protobuf values everywhere: in
// memory, on disk (a protobuf-encoded qdrant.Struct per point) and on the
// wire, so integers (int64) and floats never blur: a stored 3.0 stays a
// float and does not match the integer 3.
//
// # Persistence and durability
//
// The data directory holds one bbolt file (FileName). Every point write
// (upsert, delete, payload and vector updates, field indexes, and each
// UpdateBatch) is committed (fsync'ed) before the call returns, and only
// then applied to memory: an acknowledged write is durable, a failed one
// changed nothing. The wait flag of Qdrant's write requests therefore makes
// no difference here: wait=false behaves like wait=true and the status is
// always Completed. On Open everything is restored: collections, their
// configs, points, payloads, payload-index definitions and the operation
// counter. A second process (or a second Open in this process) on the same
// directory fails at once with ErrDirectoryInUse instead of waiting for the
// file lock.
//
// Group commit: point writes are queued (at most Options.MaxQueuedWrites)
// to one committer per DB. The writes that arrive while a commit is being
// fsync'ed, to any collections, share the next bbolt transaction and its
// one fsync; each keeps its own operation ids and is acknowledged only
// once the shared commit is durable. Within a group the writes made only of
// payload changes run first, then the others, each kind in arrival order
// (none is acknowledged yet, so either order is one its callers could have
// seen), and each sees the writes run before it. A write that fails (a
// point not found, a bad vector) is left out and the others are run again
// without it, so it neither fails nor undoes them; with payload writes
// first, the likeliest failure (the access flush finding a point deleted
// meanwhile) comes before any write that changed a collection's memory,
// which a failure after it would make reload from disk. A caller whose context
// ends while its write still waits in the queue gets Canceled and the write
// is never applied; once the committer has taken it, the caller gets its
// true outcome after that commit, so a write reported as failed never
// shows up later (Qdrant promises no more: an update that reached its WAL
// is applied whether or not the client waits). Options.NoGroupCommit gives
// each write its own transaction, for measuring.
//
// Reads and writes: a read sees a write entirely or not at all. A write
// made only of payload changes (set, overwrite, delete or clear payload,
// and batches of those) does not hold the collection's readers through its
// fsync: just before the commit it publishes the committed records of the
// points it rewrites as an overlay that readers use instead of the file,
// and after the commit it applies postings and versions and drops the
// overlay in one short exclusive section. So the access flush's batches,
// fsync'ed for milliseconds, never stall a read. Writes that change
// vectors or point sets (upsert, delete, update vectors) and field-index
// changes hold the collection's lock from their first operation until
// after the commit, as a read of them must see vectors, slots and payloads
// change together; reads of other collections never wait for them. One
// committer runs every group, so while it waits for a collection's readers
// (to lock it for such a write, or for a payload write's short apply),
// writes to other collections wait too: a long read (a large scroll) can
// delay every write by its duration. No
// reader waits for a writer while holding a bbolt read transaction, so a
// commit that grows the file past the memory map (bbolt's remap waits for
// read transactions) cannot deadlock.
//
// # Memory
//
// Vectors live in memory in contiguous chunks of a slab (cosine vectors
// normalised at insert, as Qdrant does). Payloads are not kept decoded on
// the Go heap: they are read from bbolt's memory map when a filter or a
// response needs them; a gRPC reply carrying whole payloads copies their
// stored bytes into the reply without decoding them (wire.go). Payload
// indexes (keyword, integer, float, bool, datetime) keep their postings in
// memory and answer filter conditions without touching payloads; text, geo
// and uuid indexes are accepted and
// reported but change nothing.
//
// # Search
//
// Search is exact: every candidate is scored (SIMD dot products via vek32
// on amd64 with AVX2, unrolled Go elsewhere), in parallel over slot ranges,
// each with a bounded top-k heap. Scores follow Qdrant: Cosine and Dot
// return the dot product (larger is better); Euclid and Manhattan return
// the distance (smaller is better). score_threshold is strict (Cosine/Dot
// keep score > t, Euclid/Manhattan keep distance < t). Ties are broken by
// point id, so results are deterministic. A query by point id uses that
// point's vector and leaves the point out. A query without a query vector
// lists points in id order. Scroll orders by id: numeric ids first
// (ascending), then UUIDs by bytes; its offset is inclusive.
//
// # Queries, groups and order
//
// Points/Query is Qdrant v1.19's universal query over one local shard (see
// universal.go): nearest by vector or by point id, no query (id order),
// order_by (over an integer, float or datetime range index, as Qdrant
// requires), random sample, and prefetches nested to any depth, each with
// its own query, filter, limit and score_threshold, merged by a nearest
// rescoring, order_by, sample or fusion (RRF, weighted RRF, DBSF); the root
// filter reaches every prefetch and the outer limit and offset apply last.
// QueryGroups and SearchGroups run Qdrant's group-by driver over such a
// query (groups.go). Where Qdrant leaves the order of equal scores to hash
// maps, results here are ordered by point id. Random samples come from a
// generator seeded by Options.SampleSeed (random when zero), so a fixed
// seed makes the sequence of samples reproducible. Scroll takes order_by
// too, as Qdrant does (no offset, no next page).
//
// # Batches and aliases
//
// Points/UpdateBatch applies its operations in order, each with its own
// operation id, but all or nothing: where Qdrant keeps the operations
// before a failing one, here a failure leaves nothing of the batch.
// Aliases (create, rename, delete, list) are resolved wherever a
// collection name is accepted, except by DeleteCollection, as in Qdrant;
// one UpdateAliases request is applied entirely or not at all.
// Collections/Update merges its diffs into the stored configuration and
// echoes them; nothing else changes, search being exact.
//
// # Filters
//
// Filters follow Qdrant v1.19's evaluator; see the comment at the top of
// filter.go for the rules (must/should/must_not/min_should, nested, match,
// except, ranges, is_empty, is_null, values_count, has_id). Text matching:
// there is no full-text index here, so match text and phrase are
// case-sensitive substring tests and text_any is true when any
// whitespace-separated token of the query is a substring, which is what
// Qdrant does for a field without a full-text index.
//
// # What is not here
//
// Named, sparse and multi vectors, formula queries, MMR, recommend,
// discover, context, relevance feedback, lookup_from, group with_lookup,
// deleting the (only, unnamed) vector of a point, facets, snapshots,
// sharding and geo filters answer Unimplemented (or InvalidArgument) with a
// message naming the feature; nothing unsupported is silently ignored. Every other gRPC method answers Unimplemented with
// "memrank embedded store: <Service>/<Method> is not implemented".
package store
