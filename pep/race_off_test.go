//go:build !race

package pep

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = false
