package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/bundles"
	"github.com/airlock-dev/airlock/pep"
	"github.com/airlock-dev/airlock/pep/audit"
)

func newRunCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [flags] -- SERVER_COMMAND [ARGS...]",
		Short: "Start an MCP server and enforce the policy on every frame to and from it",
		Long: `run starts the MCP server as a child process and relays MCP between its own
stdin/stdout and the server's, deciding tools/call, tools/list, resources/read,
prompts/get, sampling and elicitation frames with the policy. Everything else
passes through byte for byte. Logs go to stderr; stdout carries only MCP.

Exit codes: 0 the client closed its input; 1 internal error; 2 usage;
3 the server exited while the client was connected; 4 the server could not be
started; 5 stopped by a signal.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := loadConfig(cmd)
			if err != nil {
				return &exitError{code: pep.ExitUsage, err: err}
			}
			code, err := run(cmd.Context(), c, args)
			if code != pep.ExitOK || err != nil {
				return &exitError{code: code, err: err}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringP("server", "n", "", "the server's name in the policy data (default: the command's base name)")
	policyFlags(fs)
	fs.String("audit", "", `audit log file ("-" for stderr; default: STATE_DIR/audit.jsonl)`)
	fs.String("audit-arguments", "hash", "argument values in the audit log: hash, omit or full")
	fs.Int("max-frame-bytes", pep.DefaultMaxFrameBytes, "largest frame relayed; larger ones are refused")
	fs.Duration("grace", pep.DefaultGrace, "wait after the client leaves before SIGTERM, and after SIGTERM before SIGKILL")
	fs.String("log-level", "info", "debug, info, warn or error")
	fs.String("session", "", "session ID shared by the client's airlock processes (default: the client process)")
	fs.String("state-dir", "", "state directory (default: $XDG_STATE_HOME/airlock)")
	return cmd
}

func run(ctx context.Context, c *config, argv []string) (int, error) {
	if c.Server == "" {
		c.Server = filepath.Base(argv[0])
	}
	log, err := c.logger()
	if err != nil {
		return pep.ExitUsage, err
	}
	// Like a missing policy, an audit log that cannot be opened does not
	// stop airlock: every decision it cannot record is refused, saying why.
	auditLog, closeAudit, err := openAudit(c)
	if err != nil {
		log.Error("no audit log; refusing every decided frame", "err", err)
		auditLog, closeAudit = unavailableAudit{err}, func() {}
	}
	defer closeAudit()

	// A policy that cannot be loaded does not stop the server: airlock
	// runs and refuses every frame it decides, saying why, so the client
	// sees the reason rather than a server that never started.
	var decider pep.Decider
	b, err := bundles.Load(ctx, c.Policy, c.Data)
	if err == nil {
		decider, err = pep.NewEngine(ctx, b)
	}
	if err != nil {
		log.Error("no policy loaded; refusing every decided frame", "err", err)
		decider = pep.Unavailable{Err: err}
	} else {
		log.Debug("policy loaded", "revision", decider.Revision())
		if err := bundles.UnlistedServer(b.Data, c.Server); err != nil {
			log.Warn(err.Error())
		}
	}

	proxy, err := pep.New(pep.Options{
		Server:         c.Server,
		Decider:        decider,
		Session:        pep.NewMemorySession(sessionID(c)),
		Audit:          auditLog,
		MaxFrameBytes:  c.MaxFrameBytes,
		AuditArguments: c.AuditArguments,
		Logger:         log,
	})
	if err != nil {
		return pep.ExitUsage, err
	}
	server := exec.Command(argv[0], argv[1:]...)
	code, err := pep.RunStdio(ctx, proxy, server, pep.StdioOptions{Grace: c.Grace})
	if err != nil {
		log.Error("stopped", "exit", code, "reason", err)
	}
	return code, nil
}

// sessionID names the client session: AIRLOCK_SESSION (or --session) when
// set, else the client process, which is airlock's parent.
func sessionID(c *config) string {
	if c.Session != "" {
		return c.Session
	}
	return "pid-" + strconv.Itoa(os.Getppid())
}

func openAudit(c *config) (pep.AuditLog, func(), error) {
	path := c.Audit
	if path == "-" {
		return audit.New(os.Stderr), func() {}, nil
	}
	if path == "" {
		dir, err := c.stateDir()
		if err != nil {
			return nil, nil, err
		}
		path = filepath.Join(dir, "audit.jsonl")
	}
	w, err := audit.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	return w, func() {
		if err := w.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			fmt.Fprintln(os.Stderr, "airlock: closing the audit log:", err)
		}
	}, nil
}

// unavailableAudit stands in for an audit log that could not be opened.
type unavailableAudit struct{ err error }

func (u unavailableAudit) Append(any) (audit.Entry, error) { return audit.Entry{}, u.err }
