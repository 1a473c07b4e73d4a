package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/pep"
	"github.com/airlock-dev/airlock/pep/audit"
)

func newAuditCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit trail"}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify FILE",
		Short: "Check the audit log's hash chain and name the first bad line",
		Long: `verify recomputes every record's hash and its link to the record before.
Exit 0: the chain is whole. Exit 1: a record was altered, removed, reordered or
inserted (the first bad line is named), or the file is not an audit log.
A last line cut short by a crash is reported but exits 0: every complete
record before it verified.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return &exitError{code: pep.ExitInternal, err: err}
			}
			defer f.Close()
			n, err := audit.Verify(f)
			out := cmd.OutOrStdout()
			switch {
			case err == nil:
				fmt.Fprintf(out, "%s: ok, %d records, chain intact\n", args[0], n)
				return nil
			case errors.Is(err, audit.ErrTruncated):
				fmt.Fprintf(out, "%s: ok, %d records, chain intact; %v\n", args[0], n, err)
				return nil
			default:
				return &exitError{code: pep.ExitInternal, err: fmt.Errorf("%s: %w (%d good records before it)", args[0], err, n)}
			}
		},
	})
	return cmd
}
