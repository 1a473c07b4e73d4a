package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/pep"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print airlock's version and the OPA version it embeds",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			opa := "unknown"
			if info, ok := debug.ReadBuildInfo(); ok {
				for _, dep := range info.Deps {
					if dep.Path == "github.com/open-policy-agent/opa" {
						opa = dep.Version
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "airlock %s (input v%d, OPA %s)\n", version, pep.InputVersion, opa)
		},
	}
}
