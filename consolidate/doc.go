// Package consolidate is memrank's memory upkeep (docs/consolidation.md):
// a job that walks a memory collection, computes every memory's tier with
// package scoring exactly as the read path does (archived past the decay
// floor), and writes back `tier` where it changed, with one audit record
// per transition in the collection's audit companion. The tier is a label:
// age lowers a memory's weight but never takes it out of answers, so the
// job never writes `retrievable: false`. Only a reviewer's archive (this
// package's Archive) or another writer (a supersession) does, and the job
// leaves such memories out. A memory an earlier version took out of
// answers for age, as its audit trail says, is made retrievable again
// (lift.go). The package also serves the stale-review queue (memories in
// tier stale, oldest first) and its archive answer, and folds the
// access_counts keys of replicas that stopped flushing long ago into one
// key.
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
