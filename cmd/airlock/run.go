package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/bundles"
	"github.com/airlock-dev/airlock/pep"
	"github.com/airlock-dev/airlock/pep/audit"
	"github.com/airlock-dev/airlock/pep/sessions"
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
			stopProfile, err := startCPUProfile(cmd)
			if err != nil {
				return &exitError{code: pep.ExitUsage, err: err}
			}
			code, err := run(cmd.Context(), c, args)
			stopProfile()
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
	fs.Duration("session-max-age", DefaultSessionMaxAge, "stale sessions older than this are removed when airlock starts")
	stateFlags(fs)
	// For the benchmarks (bench/README.md), not for users: hidden.
	fs.String("cpu-profile", "", "write a CPU profile of the whole run to this file")
	_ = fs.MarkHidden("cpu-profile")
	return cmd
}

// startCPUProfile starts the CPU profile --cpu-profile asks for, if any.
func startCPUProfile(cmd *cobra.Command) (stop func(), err error) {
	path, _ := cmd.Flags().GetString("cpu-profile")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// gcPercent is airlock run's GOGC unless the environment sets one. Each
// decision leaves ~30 KB of short-lived garbage (OPA's evaluation); at the
// default 100 the collector runs so often that it sets the p99 latency
// (bench: seq p99 2.1 ms at 100, 1.2 ms at 200), for ~3 MiB more heap. Large
// frames hand their memory back at once either way (pep.releaseIfLarge).
const gcPercent = 200

func run(ctx context.Context, c *config, argv []string) (int, error) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
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

	// The policy compiles while the server starts and the client's first
	// frames (initialize) flow; frames that need a decision wait for it.
	// A policy that cannot be loaded does not stop the server: airlock
	// runs and refuses every frame it decides, saying why, so the client
	// sees the reason rather than a server that never started.
	loadPolicy := func(ctx context.Context) pep.Policy {
		b, err := bundles.Load(ctx, c.Policy, c.Data)
		var engine *pep.Engine
		if err == nil {
			engine, err = pep.NewEngine(ctx, b)
		}
		if err != nil {
			log.Error("no policy loaded; refusing every decided frame", "err", err)
			return pep.Policy{Decider: pep.Unavailable{Err: err}}
		}
		log.Debug("policy loaded", "revision", engine.Revision())
		if err := bundles.UnlistedServer(b.Data, c.Server); err != nil {
			log.Warn(err.Error())
		}
		gate, err := engine.ResponseGate(ctx, c.Server)
		if err != nil {
			log.Warn("the policy's response gate cannot be read; deciding every response", "err", err)
		}
		// Compiling leaves several MiB of garbage; hand it back now rather
		// than carry it as resident memory for the whole session.
		debug.FreeOSMemory()
		return pep.Policy{Decider: engine, ProtectedPaths: bundles.ProtectedPaths(b.Data, c.Server), Gate: gate}
	}

	proxy, err := pep.New(pep.Options{
		Server:         c.Server,
		LoadPolicy:     loadPolicy,
		Session:        openSession(c, log),
		Audit:          auditLog,
		MaxFrameBytes:  c.MaxFrameBytes,
		Home:           home(),
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

// openSession returns the client session shared by every airlock of that
// client: AIRLOCK_SESSION (or --session) when set, else the client process,
// which is airlock's parent. A store that cannot be opened fails closed:
// every decided frame is refused with the reason.
func openSession(c *config, log *slog.Logger) pep.Session {
	store, err := openStore(c)
	if err != nil {
		log.Error("no session store; refusing every decided frame", "err", err)
		return unavailableSession{err}
	}
	for _, w := range store.Warnings() {
		log.Warn(w)
	}
	client, err := sessions.ParentClient()
	if err != nil {
		log.Warn("cannot identify the client process", "err", err)
	}
	id := c.Session
	if id == "" {
		if client == nil {
			log.Error("no session: set AIRLOCK_SESSION; refusing every decided frame")
			return unavailableSession{errors.New("cannot identify the client process; set AIRLOCK_SESSION")}
		}
		id = sessions.ClientSessionID(client)
	}
	go func() {
		// Housekeeping that no request waits for.
		if removed, err := store.GC(sessions.GCPolicy{StaleAge: c.SessionMaxAge, NamedAge: c.SessionMaxAge}, time.Now()); err != nil {
			log.Debug("removing stale sessions", "err", err)
		} else if len(removed) > 0 {
			log.Debug("removed stale sessions", "count", len(removed))
		}
	}()
	log.Debug("session", "id", id)
	session := store.Session(id, client)
	session.OnRollback = func(err *sessions.RollbackError) {
		// Someone deleted or rolled back the session file without a clear:
		// the taint was restored; a person should know.
		log.Error("the session file lost its taint without a recorded clear; taint restored", "err", err)
	}
	return session
}

// unavailableSession stands in for a session store that cannot be used.
type unavailableSession struct{ err error }

func (u unavailableSession) ID() string { return "" }

func (u unavailableSession) State(context.Context) (pep.SessionState, error) {
	return pep.SessionState{}, u.err
}
func (u unavailableSession) Taint(context.Context, pep.TaintEvent) error { return u.err }
func (u unavailableSession) Refused(context.Context) error               { return u.err }

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

// home is the user's home directory, for "~" in protected paths; without
// one, "~" is not expanded (and ~-globs match only ~-spelled arguments).
func home() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
