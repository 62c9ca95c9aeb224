// Package consolidate is memrank's memory upkeep (docs/consolidation.md):
// a job that walks a memory collection, computes every memory's tier and
// decay-floor retrievability with package scoring exactly as the read path
// does, and writes back `tier` and `retrievable` where they changed, with
// one audit record per transition in the collection's audit companion. It
// archives what fell past the decay floor, serves the stale-review queue
// (memories in tier stale, oldest first) and its archive answer, and folds
// the access_counts keys of replicas that stopped flushing long ago into
// one key.
//
// Several replicas may run the job on one collection at once: every write
// is a compare-and-set (a SetPayload whose filter requires the fields the
// decision was computed from to be unchanged), and audit records have ids
// derived from the memory, the transition and the state it started from,
// so two replicas making the same transition write one record. A
// transition also writes its record's id into the point
// (memrank_tier_change): the read-back audits exactly the writes that
// applied, whatever changed after them. The lease recorded in the
// companion only spares replicas the duplicate work.
//
// With tenancy on, a request that names no tenant is refused unless it is
// the operator's (Request.Operator and its kin): a missing tenant never
// widens a request to every tenant.
package consolidate
