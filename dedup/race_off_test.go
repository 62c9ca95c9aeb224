//go:build !race

package dedup_test

const raceOn = false
