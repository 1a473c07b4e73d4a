package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/bundles"
	"github.com/airlock-dev/airlock/pep"
)

func newEvalCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval --input FILE",
		Short: "Decide one saved input document with the policy, like opa eval",
		Long: `eval loads the policy as run would, evaluates data.airlock.decision for the
input document in FILE ("-" for stdin), and prints the decision followed by the
rules that fired. It exits 0 whatever the decision; a policy or input that
cannot be evaluated exits 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := loadConfig(cmd)
			if err != nil {
				return &exitError{code: pep.ExitUsage, err: err}
			}
			inputPath, _ := cmd.Flags().GetString("input")
			if err := evalInput(cmd, c, inputPath); err != nil {
				return &exitError{code: pep.ExitInternal, err: err}
			}
			return nil
		},
	}
	policyFlags(cmd.Flags())
	cmd.Flags().String("input", "", `input document (JSON; "-" for stdin)`)
	_ = cmd.MarkFlagRequired("input")
	return cmd
}

func evalInput(cmd *cobra.Command, c *config, path string) error {
	var r io.Reader = cmd.InOrStdin()
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		defer f.Close()
		r = f
	}
	input, err := ast.ValueFromReader(r)
	if err != nil {
		return fmt.Errorf("input %s: %w", path, err)
	}
	b, err := bundles.Load(cmd.Context(), c.Policy, c.Data)
	if err != nil {
		return err
	}
	engine, err := pep.NewEngine(cmd.Context(), b)
	if err != nil {
		return err
	}
	d, err := engine.DecideValue(cmd.Context(), input)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return err
	}
	fmt.Fprintf(out, "\npolicy %s: ", engine.Revision())
	if d.Allow {
		fmt.Fprintln(out, "allowed")
	} else {
		fmt.Fprintln(out, "refused")
	}
	for _, v := range d.Violations {
		fmt.Fprintf(out, "  %-8s %s: %s\n", v.Mode, v.Rule, v.Message)
	}
	for _, w := range d.Waived {
		fmt.Fprintf(out, "  waived   %s by %s (expires %s): %s\n", w.Rule, w.Waiver, w.Expires, w.Message)
	}
	for _, w := range d.ExpiredWaivers {
		fmt.Fprintf(out, "  expired  waiver %s for %s expired %s and was ignored\n", w.Waiver, w.Rule, w.Expires)
	}
	for _, t := range d.Taints {
		fmt.Fprintf(out, "  taint    %s: %s\n", t.Rule, t.Message)
	}
	return nil
}
