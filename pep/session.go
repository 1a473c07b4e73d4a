package pep

import (
	"context"
	"slices"
	"sync"
)

// Session holds the taint state of one client session. The proxy reads it
// before deciding a frame and records taint before it delivers the content
// that caused it, so the content can never outrun its taint.
type Session interface {
	// ID names the session (in the audit trail too); it does not change.
	ID() string
	State(ctx context.Context) (SessionState, error)
	Taint(ctx context.Context, ev TaintEvent) error
	// Refused counts a refusal, so a person can see how often the session
	// was stopped.
	Refused(ctx context.Context) error
}

// MemorySession is a session held by one airlock process. It is the session
// when no shared store is configured.
type MemorySession struct {
	mu      sync.Mutex
	state   SessionState
	refused int
}

// NewMemorySession returns a clean session with the given ID.
func NewMemorySession(id string) *MemorySession {
	return &MemorySession{state: SessionState{ID: id}}
}

// ID is the session's ID.
func (s *MemorySession) ID() string { return s.state.ID }

// State returns a copy of the session's state.
func (s *MemorySession) State(context.Context) (SessionState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	st.Taint = slices.Clone(s.state.Taint)
	return st, nil
}

// Taint marks the session tainted.
func (s *MemorySession) Taint(_ context.Context, ev TaintEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state.Tainted = true
	s.state.Taint = append(s.state.Taint, ev)
	return nil
}

// Refused counts a refusal.
func (s *MemorySession) Refused(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused++
	return nil
}
