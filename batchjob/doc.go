// Package batchjob runs a job over every point of a Qdrant collection, one
// page at a time, so that a long rewrite (a backfill, a schema migration, a
// re-embedding) can be interrupted at any moment and resumed, and undone.
//
// A job keeps its own state in a companion collection,
// <collection>_memrank_<job>:
//
//   - one checkpoint point: the scroll offset of the next page, the pages
//     and points done, the options the run was started with and the job's
//     own state (its report so far), written after every page;
//   - one "original" point per point the job changed, holding that point's
//     payload as it was before the job's first write to it (protobuf bytes,
//     so integers, floats, nulls and nesting come back exactly).
//
// A page is handed to the job, then the checkpoint moves past it. A process
// killed in between redoes that page when it resumes, so a job's page
// function must be idempotent; the runner tells it which page is a redo.
// Rollback writes every kept original back over its point, page by page,
// deleting each original once its point is restored, so it too resumes.
package batchjob
