// Package rego holds airlock's default policy: an OPA bundle (Rego v1) whose
// entry point is data.airlock.decision. The Go proxy builds the input
// document, the user's policy file is the bundle's data document, and the
// rules under airlock.rules decide. See README.md in this directory for the
// layout, the rule IDs and how to add a rule package.
package rego

import (
	"embed"
	"strings"
)

// Bundle is the bundle directory as it is kept in the repository: .manifest,
// the modules and their *_test.rego tests (so the tests can be run from the
// binary).
//
//go:embed .manifest airlock
var Bundle embed.FS

// Revision is the revision in Bundle's .manifest.
const Revision = "airlock-default-1"

// IsTest tells whether a bundle file is a Rego test file. The loader
// (package bundles) leaves test files out of the bundle it activates.
func IsTest(name string) bool { return strings.HasSuffix(name, "_test.rego") }
