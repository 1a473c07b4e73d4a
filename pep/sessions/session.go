package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock/pep"
)

// Session is one airlock process's handle on a stored session. It
// implements pep.Session and is safe for concurrent use.
//
// The handle keeps a copy of the last record it read or wrote (bounded by
// the record caps), to notice a session file that lost taint without a
// clear: see RollbackError.
type Session struct {
	// OnRollback, if set before the session is used, is called (outside
	// the handle's lock) each time the handle finds that the session file
	// lost taint it had seen: the file was deleted or rolled back. The
	// session stays tainted either way; this is for the log.
	OnRollback func(*RollbackError)

	store  *Store
	id     string
	named  bool
	client *Client // for a client-derived session
	err    error   // an ID that cannot be used: every method fails

	mu        sync.Mutex
	seen      Record // the last record read or written; Rev 0 when none
	buf       []byte // read buffer, reused
	raw       []byte // the file's bytes seen was decoded from,
	rawValid  bool   // if rawValid
	rollbacks int
	last      *RollbackError
}

var _ pep.Session = (*Session)(nil)

// Session returns a handle on session id for one airlock process; client is
// that process's client (ParentClient), or nil if it is unknown.
//
// When id is ClientSessionID(client), the session is client-derived: it
// records the client and ends with it (see GC). Any other id is a named
// session (AIRLOCK_SESSION), shared by every process that uses the name.
// A name shaped like another client's session ID ("client-PID-START") is
// refused, as is an empty ID: every method of the handle then fails, so the
// proxy fails closed and says why.
func (s *Store) Session(id string, client *Client) *Session {
	h := &Session{store: s, id: id}
	switch {
	case client != nil && id == ClientSessionID(client):
		cl := *client
		h.client = &cl
	case id == "":
		h.err = errors.New("sessions: empty session ID")
	case looksLikeClientID(id):
		h.err = fmt.Errorf("sessions: session name %q is reserved for the session of client process %s", id, strings.TrimPrefix(id, "client-"))
	default:
		h.named = true
	}
	return h
}

func looksLikeClientID(name string) bool {
	rest, ok := strings.CutPrefix(name, "client-")
	if !ok {
		return false
	}
	pid, start, ok := strings.Cut(rest, "-")
	return ok && isDigits(pid) && isDigits(start)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ID returns the session's ID.
func (s *Session) ID() string { return s.id }

// Named reports whether the session is named rather than client-derived.
func (s *Session) Named() bool { return s.named }

// Err returns why the handle cannot be used (an ID Session refused), or nil.
func (s *Session) Err() error { return s.err }

// State reads the session's record afresh (another process may have tainted
// or cleared it a moment ago). A session without a file is clean. If the
// file lost taint this handle saw, without a clear, the state stays
// tainted, the taint is written back, and OnRollback is called.
func (s *Session) State(ctx context.Context) (pep.SessionState, error) {
	if s.err != nil {
		return pep.SessionState{}, s.err
	}
	if err := ctx.Err(); err != nil {
		return pep.SessionState{}, err
	}
	s.mu.Lock()
	st, rb, err := s.state(ctx)
	s.mu.Unlock()
	s.report(rb)
	return st, err
}

func (s *Session) state(ctx context.Context) (pep.SessionState, *RollbackError, error) {
	base := fileBase(s.id)
	exists, err := s.store.readFile(base, &s.buf)
	if err != nil {
		return pep.SessionState{}, nil, err
	}
	if exists && s.rawValid && bytes.Equal(s.buf, s.raw) {
		// The very bytes this handle decoded last time: the same record.
		return s.seen.State(), nil, nil
	}
	rec := Record{ID: s.id}
	if exists {
		if rec, err = s.store.decode(base, s.buf); err != nil {
			return pep.SessionState{}, nil, err
		}
		if rec.ID != s.id {
			return pep.SessionState{}, nil, fmt.Errorf("sessions: %s holds session %q, not %q", s.store.Path(s.id), rec.ID, s.id)
		}
	}
	if !s.rolledBack(&rec) {
		s.seen = rec
		s.rawValid = exists
		if exists {
			s.raw, s.buf = s.buf, s.raw
		}
		return rec.State(), nil, nil
	}
	if !s.named && !s.client.Alive() {
		// The client is gone, and GC removes the session of a gone
		// client: nothing to restore it for. Stay tainted meanwhile.
		kept := s.restore(&rec)
		return kept.State(), nil, nil
	}
	rb, err := s.write(ctx, noWrite, nil)
	if err != nil {
		// The taint could not be written back: this handle still knows it.
		if rb == nil { // failed before it could look under the lock
			rb = s.rollback(&rec, exists)
			rb.HealErr = err
		}
		kept := s.restore(&rec)
		return kept.State(), rb, nil
	}
	return s.seen.State(), rb, nil
}

// Taint records ev on the session durably (file and directory fsynced)
// before it returns, creating the session's file on its first write.
func (s *Session) Taint(ctx context.Context, ev pep.TaintEvent) error {
	if s.err != nil {
		return s.err
	}
	s.mu.Lock()
	rb, err := s.write(ctx, durableWrite, func(r *Record) {
		if ev.DecisionID == "" || !hasTaint(r.Taint, ev.DecisionID) {
			r.Taint = append(r.Taint, ev)
		}
	})
	s.mu.Unlock()
	s.report(rb)
	if err != nil {
		return fmt.Errorf("sessions: recording taint on session %q: %w", s.id, err)
	}
	return nil
}

// Refused counts a refusal. The count is informational: the file is
// fsynced, the directory is not (see the package documentation).
func (s *Session) Refused(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	s.mu.Lock()
	rb, err := s.write(ctx, fastWrite, func(r *Record) { r.Refused++ })
	s.mu.Unlock()
	s.report(rb)
	if err != nil {
		return fmt.Errorf("sessions: counting a refusal on session %q: %w", s.id, err)
	}
	return nil
}

// Rollbacks returns how many times this handle found its session file
// deleted or rolled back, and the last time it did (nil if never).
func (s *Session) Rollbacks() (int, *RollbackError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rollbacks, s.last
}

// write applies change (if not nil) to the record under the session's lock,
// after putting back what a deletion or rollback removed. mode is the write
// change needs; a restore is always durable. Callers hold s.mu.
func (s *Session) write(ctx context.Context, mode writeMode, change func(*Record)) (*RollbackError, error) {
	var rb *RollbackError
	rec, err := s.store.update(ctx, s.id, func(rec *Record, exists bool) (writeMode, error) {
		m := noWrite
		if !exists {
			rec.Named = s.named
			if s.client != nil {
				cl := *s.client
				rec.Client = &cl
			}
		}
		if s.rolledBack(rec) {
			rb = s.rollback(rec, exists)
			*rec = s.restore(rec)
			m = durableWrite
		}
		if change != nil {
			change(rec)
			m = max(m, mode)
		}
		return m, nil
	})
	if err != nil {
		if rb != nil {
			rb.HealErr = err
		}
		return rb, err
	}
	s.seen = rec
	s.rawValid = false
	return rb, nil
}

// rolledBack reports whether cur lost taint that this handle saw without a
// clear: cur is an older revision than the one seen, or it is clean at an
// epoch no later than the one at which the taint was seen.
func (s *Session) rolledBack(cur *Record) bool {
	if !s.seen.Tainted {
		return false
	}
	return cur.Rev < s.seen.Rev || (!cur.Tainted && cur.Epoch <= s.seen.Epoch)
}

// restore merges the record the handle saw with cur: the taint seen, plus
// whatever cur gained that the handle has not seen.
func (s *Session) restore(cur *Record) Record {
	out := s.seen.clone()
	for _, e := range cur.Taint {
		if !hasTaint(out.Taint, e.DecisionID) {
			out.Taint = append(out.Taint, e)
		}
	}
	out.Rev = max(out.Rev, cur.Rev)
	out.Epoch = max(out.Epoch, cur.Epoch)
	out.Refused = max(out.Refused, cur.Refused)
	out.TaintDropped = max(out.TaintDropped, cur.TaintDropped)
	out.normalize()
	return out
}

func (s *Session) rollback(cur *Record, exists bool) *RollbackError {
	rb := &RollbackError{
		ID: s.id, Path: s.store.Path(s.id), FileExists: exists,
		FileRev: cur.Rev, FileEpoch: cur.Epoch, SeenRev: s.seen.Rev, SeenEpoch: s.seen.Epoch,
		Missing: missingTaint(s.seen.Taint, cur.Taint),
	}
	s.rollbacks++
	s.last = rb
	return rb
}

func (s *Session) report(rb *RollbackError) {
	if rb != nil && s.OnRollback != nil {
		s.OnRollback(rb)
	}
}

// RollbackError describes a session file that lost taint a Session handle
// had seen, without a clear: it was deleted, or an older copy was put back.
// The handle stays tainted and writes the taint back.
type RollbackError struct {
	ID   string // the session
	Path string // its file
	// FileExists is false when the file was gone.
	FileExists bool
	// FileRev and FileEpoch are what the file said; SeenRev and SeenEpoch
	// what the handle had seen.
	FileRev, SeenRev     uint64
	FileEpoch, SeenEpoch int
	// Missing are the taint events the handle had seen that the file lost.
	Missing []pep.TaintEvent
	// HealErr is why the taint could not be written back (nil if it was).
	HealErr error
}

func (e *RollbackError) Error() string {
	what := "was rolled back"
	if !e.FileExists {
		what = "was deleted"
	}
	msg := fmt.Sprintf("session %q: the session file %s %s without a clear (file: revision %d, epoch %d; this process saw revision %d, epoch %d, tainted); %d taint events were missing; the session stays tainted",
		e.ID, e.Path, what, e.FileRev, e.FileEpoch, e.SeenRev, e.SeenEpoch, len(e.Missing))
	if e.HealErr != nil {
		return msg + "; writing the taint back failed: " + e.HealErr.Error()
	}
	return msg + " and its taint was written back"
}
