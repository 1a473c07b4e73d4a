// Package rego holds airlock's default policy: an OPA bundle (Rego v1) whose
// entry point is data.airlock.decision. The Go proxy builds the input
// document, the user's policy file is the bundle's data document, and the
// rules under airlock.rules decide. See README.md in this directory for the
// layout, the rule IDs and how to add a rule package.
package rego

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
)

// Bundle is the bundle directory as it is kept in the repository: .manifest,
// the modules and their *_test.rego tests. `airlock policy test` runs the
// tests from it; load Policy to enforce.
//
//go:embed .manifest airlock
var Bundle embed.FS

// Revision is the revision in Bundle's .manifest.
const Revision = "airlock-default-1"

// Policy returns Bundle without the test files: the bundle to activate, e.g.
// with bundle.NewFSLoader(rego.Policy()). Tests are left out so that the
// production compiler never sees test packages or their fixtures.
func Policy() fs.FS { return policyFS{Bundle} }

// IsTest tells whether a bundle file is a Rego test file.
func IsTest(name string) bool { return strings.HasSuffix(name, "_test.rego") }

// policyFS hides the test files of a file system.
type policyFS struct{ fsys fs.FS }

func (p policyFS) Open(name string) (fs.File, error) {
	if IsTest(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f, err := p.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if d, ok := f.(fs.ReadDirFile); ok {
		return &policyDir{ReadDirFile: d}, nil
	}
	return f, nil
}

func (p policyFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(p.fsys, name)
	return withoutTests(entries), err
}

func withoutTests(entries []fs.DirEntry) []fs.DirEntry {
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		return !e.IsDir() && IsTest(e.Name())
	})
}

// policyDir is an open directory of policyFS.
type policyDir struct{ fs.ReadDirFile }

func (d *policyDir) ReadDir(n int) ([]fs.DirEntry, error) {
	for {
		entries, err := d.ReadDirFile.ReadDir(n)
		entries = withoutTests(entries)
		if n <= 0 || len(entries) > 0 || err != nil {
			return entries, err
		}
		// A batch of tests only: with n > 0 an empty result needs an error,
		// so read on.
	}
}
