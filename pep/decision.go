package pep

import (
	"context"
	"fmt"
)

// Decision is the policy's answer for one frame (data.airlock.decision).
type Decision struct {
	Allow          bool            `json:"allow"`
	Violations     []Violation     `json:"violations"`
	Waived         []Waived        `json:"waived"`
	ExpiredWaivers []ExpiredWaiver `json:"expired_waivers"`
	Taint          bool            `json:"taint"`
	Taints         []Violation     `json:"taints"`
	Mode           string          `json:"mode"`
}

// Violation is a rule that fired, with its stable dotted ID.
type Violation struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Mode    string `json:"mode,omitempty"` // "enforce" blocks; "audit" is only recorded
}

// Waived is a violation that a live waiver let through.
type Waived struct {
	Rule    string `json:"rule"`
	Message string `json:"message,omitempty"`
	Waiver  string `json:"waiver"`
	Expires string `json:"expires,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// ExpiredWaiver is a waiver that would have matched had it not expired.
type ExpiredWaiver struct {
	Waiver  string `json:"waiver"`
	Rule    string `json:"rule"`
	Expires string `json:"expires"`
}

// Enforced returns the violations that block the frame.
func (d *Decision) Enforced() []Violation {
	var out []Violation
	for _, v := range d.Violations {
		if v.Mode != "audit" {
			out = append(out, v)
		}
	}
	return out
}

// Decider decides frames. The Rego engine is one; a decider that always
// fails stands in when no policy could be loaded, so airlock keeps running
// and refuses what it would have decided.
type Decider interface {
	Decide(ctx context.Context, in *Input) (*Decision, error)
	// Revision names the policy in force, for the audit trail.
	Revision() string
}

// PolicyError is a failure to decide; the frame is refused with its rule.
type PolicyError struct {
	Rule string // "policy.unavailable" or "policy.error"
	Err  error
}

func (e *PolicyError) Error() string { return fmt.Sprintf("%s: %v", e.Rule, e.Err) }
func (e *PolicyError) Unwrap() error { return e.Err }

// Unavailable is the decider used when the policy could not be loaded: every
// decided frame is refused with the load error.
type Unavailable struct{ Err error }

// Decide always fails closed.
func (u Unavailable) Decide(context.Context, *Input) (*Decision, error) {
	return nil, &PolicyError{Rule: "policy.unavailable", Err: u.Err}
}

// Revision reports that no policy is in force.
func (u Unavailable) Revision() string { return "" }
