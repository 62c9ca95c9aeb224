//go:build race

package dedup_test

// raceOn: the race detector slows the embedded store about tenfold, so the
// SIGKILL acceptance run uses fewer points under it.
const raceOn = true
