// Command airlock is a policy enforcement point for MCP: it sits between an
// MCP client and a server, decides every frame that matters with an
// embedded Rego policy, and records each decision in a hash-chained audit
// trail.
//
// This package only wires flags and configuration to the pep, bundles and
// audit packages; it holds no policy logic.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/airlock-dev/airlock/pep"
)

func main() {
	cmd := newRootCommand()
	if err := cmd.Execute(); err != nil {
		var exit *exitError
		if errors.As(err, &exit) {
			if exit.err != nil {
				fmt.Fprintln(os.Stderr, "airlock:", exit.err)
			}
			os.Exit(exit.code)
		}
		fmt.Fprintln(os.Stderr, "airlock:", err)
		os.Exit(pep.ExitUsage)
	}
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
