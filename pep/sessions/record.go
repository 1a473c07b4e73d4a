package sessions

import (
	"slices"
	"time"

	"github.com/airlock-dev/airlock/pep"
)

// FormatVersion is the version of the session file format. A file with
// another version is an error (fail closed), not a session to guess at.
const FormatVersion = 1

// Caps that keep a session file, and the memory of a long-lived Session
// handle, bounded whatever a server or the model does.
const (
	// MaxTaint is the most taint events a record holds. Beyond it the first
	// event (what tainted the session in the first place) and the latest
	// MaxTaint-1 are kept, and TaintDropped counts the ones dropped. The
	// session stays tainted either way.
	MaxTaint = 1000
	// MaxCleared is the most clears the history keeps (the latest ones).
	MaxCleared = 50
	// MaxClearedEvents bounds the taint events kept across the whole clear
	// history: older clears are dropped first; the latest is always kept.
	MaxClearedEvents = 1000
)

// Record is a session as it is stored: one JSON file per session.
type Record struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	// Named is set for a session named by the user (AIRLOCK_SESSION) rather
	// than derived from the client process.
	Named bool `json:"named"`
	// Client is the client process of a client-derived session (nil for a
	// named session).
	Client  *Client   `json:"client,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Rev counts the writes to the record; it never goes down, so a file
	// with a lower Rev than one already seen is an old copy put back.
	Rev uint64 `json:"rev"`

	// Tainted is true while Taint is not empty.
	Tainted bool             `json:"tainted"`
	Taint   []pep.TaintEvent `json:"taint"`
	// TaintDropped counts taint events dropped by the MaxTaint cap.
	TaintDropped int `json:"taint_dropped,omitempty"`
	// Refused counts refusals since the session was last cleared clean.
	Refused int `json:"refused"`
	// Epoch counts the clears so far; only a clear increments it.
	Epoch int `json:"epoch"`
	// Cleared is the clear history, oldest first (capped: MaxCleared,
	// MaxClearedEvents).
	Cleared []ClearEvent `json:"cleared,omitempty"`

	// Stale is computed when the record is read, not stored: the session's
	// client process is gone. Named sessions are never stale by client.
	Stale bool `json:"-"`
}

// ClearEvent records a person clearing taint from a session.
type ClearEvent struct {
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	// Epoch is the session's epoch after this clear.
	Epoch int `json:"epoch"`
	// Taint holds the events this clear removed.
	Taint []pep.TaintEvent `json:"taint"`
	// Remaining is how many taint events were left on the session: a taint
	// that arrived after the person looked is not cleared.
	Remaining int `json:"remaining"`
	// Refused is the refusal count this clear reset (0 when the session
	// stayed tainted and the count was kept).
	Refused int `json:"refused"`
	// Dropped is the TaintDropped count this clear reset.
	Dropped int `json:"dropped,omitempty"`
}

// State is what the policy sees of the record.
func (r *Record) State() pep.SessionState {
	return pep.SessionState{ID: r.ID, Tainted: len(r.Taint) > 0, Taint: slices.Clone(r.Taint)}
}

// normalize derives Tainted from Taint and applies the caps. It runs on
// every record read and before every write, so neither a file written by
// hand nor a flood of taint makes a record (or a handle's memory of it)
// grow without bound.
func (r *Record) normalize() {
	if n := len(r.Taint); n > MaxTaint {
		drop := n - MaxTaint
		r.Taint = slices.Delete(r.Taint, 1, 1+drop)
		r.TaintDropped += drop
	}
	r.Tainted = len(r.Taint) > 0
	if n := len(r.Cleared); n > MaxCleared {
		r.Cleared = slices.Delete(r.Cleared, 0, n-MaxCleared)
	}
	total := 0
	for _, c := range r.Cleared {
		total += len(c.Taint)
	}
	drop := 0
	for total > MaxClearedEvents && drop < len(r.Cleared)-1 {
		total -= len(r.Cleared[drop].Taint)
		drop++
	}
	r.Cleared = slices.Delete(r.Cleared, 0, drop)
	if last := len(r.Cleared) - 1; last >= 0 && len(r.Cleared[last].Taint) > MaxClearedEvents {
		r.Cleared[last].Taint = r.Cleared[last].Taint[:MaxClearedEvents]
	}
}

// clone returns a deep copy, so a handle's memory shares nothing with a
// record handed to a caller.
func (r *Record) clone() Record {
	c := *r
	c.Taint = slices.Clone(r.Taint)
	if r.Client != nil {
		cl := *r.Client
		c.Client = &cl
	}
	c.Cleared = slices.Clone(r.Cleared)
	for i := range c.Cleared {
		c.Cleared[i].Taint = slices.Clone(c.Cleared[i].Taint)
	}
	return c
}

// hasTaint reports whether the record holds an event with the decision ID.
func hasTaint(events []pep.TaintEvent, decisionID string) bool {
	return slices.ContainsFunc(events, func(e pep.TaintEvent) bool { return e.DecisionID == decisionID })
}

// missingTaint returns the events of seen that are not in now.
func missingTaint(seen, now []pep.TaintEvent) []pep.TaintEvent {
	var out []pep.TaintEvent
	for _, e := range seen {
		if !hasTaint(now, e.DecisionID) {
			out = append(out, e)
		}
	}
	return out
}
