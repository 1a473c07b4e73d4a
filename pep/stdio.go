package pep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Exit codes of `airlock run`, documented in the README.
const (
	ExitOK           = 0 // the client closed its input and the server stopped
	ExitInternal     = 1 // airlock itself failed (bad configuration, I/O error)
	ExitUsage        = 2 // bad command line
	ExitServerExited = 3 // the server exited (or closed its output) while the client was connected
	ExitServerStart  = 4 // the server command could not be started
	ExitSignal       = 5 // airlock was told to stop by a signal; the server was stopped with it
)

// DefaultGrace is how long the server gets after EOF on its input, and
// again after SIGTERM, before the next, harsher step.
const DefaultGrace = 5 * time.Second

// StdioOptions configure RunStdio.
type StdioOptions struct {
	// Grace is the wait after closing the server's input before SIGTERM,
	// and after SIGTERM before SIGKILL.
	Grace time.Duration
	// Stdin and Stdout are the client's stream. Default: os.Stdin, os.Stdout.
	Stdin  io.Reader
	Stdout io.Writer
	// Stderr receives the server's stderr. Default: os.Stderr.
	Stderr io.Writer
}

// RunStdio starts cmd as the MCP server, relays between the client's stdio
// and the server's through p, and returns the exit code for airlock.
//
// Shutdown: when the client closes its input the server gets EOF, then
// SIGTERM after the grace period, then SIGKILL. When the server exits first,
// every request still in flight is answered with an error. SIGINT, SIGTERM
// and SIGHUP sent to airlock are forwarded to the server.
func RunStdio(ctx context.Context, p *Proxy, cmd *exec.Cmd, opts StdioOptions) (int, error) {
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Stdin == nil {
		opts.Stdin = os.Stdin
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	serverIn, err := cmd.StdinPipe()
	if err != nil {
		return ExitInternal, fmt.Errorf("server stdin: %w", err)
	}
	// Our own pipe rather than StdoutPipe: Wait closes StdoutPipe as soon
	// as the process exits, which would lose the last frames still in it.
	serverOut, serverOutW, err := os.Pipe()
	if err != nil {
		return ExitInternal, fmt.Errorf("server stdout: %w", err)
	}
	defer serverOut.Close()
	cmd.Stdout = serverOutW
	if cmd.Stderr == nil {
		cmd.Stderr = opts.Stderr
	}
	// A write to a client that has gone must be an error we handle, not
	// SIGPIPE killing airlock before it stops the server. Notify (unlike
	// Ignore) is not inherited by the server.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	// The server gets its own process group so that stopping it reaches
	// what it started too (npx starts node, a shell starts its command).
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// Wait must not hang on a stderr copy that a left-behind process keeps
	// open after the server itself has exited.
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = opts.Grace
	}
	err = cmd.Start()
	serverOutW.Close() // the server holds the write end now
	if err != nil {
		return ExitServerStart, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	var signalled atomic.Bool
	go func() {
		for {
			select {
			case sig := <-signals:
				signalled.Store(true)
				signalGroup(cmd, sig.(syscall.Signal))
			case <-exited:
				return
			}
		}
	}()

	serveErr := make(chan error, 1)
	go func() { serveErr <- p.Serve(ctx, opts.Stdin, opts.Stdout, serverIn, serverOut) }()
	go func() {
		// When the client leaves, the server has had EOF on its input;
		// give it the grace period, then ask, then insist.
		select {
		case <-p.ClientDone():
			stopServer(cmd, exited, opts.Grace)
		case <-exited:
		}
	}()

	go func() {
		// A server that exited may leave a process behind that holds its
		// output open; the output would never end. After the grace period
		// the rest of its group is killed.
		<-exited
		select {
		case <-p.serverDone:
		case <-time.After(opts.Grace):
			signalGroup(cmd, syscall.SIGKILL)
		}
	}()

	err = <-serveErr
	<-exited
	switch {
	case signalled.Load():
		return ExitSignal, nil
	case err == nil:
		return ExitOK, nil
	case errors.Is(err, ErrServerClosed):
		if waitErr != nil {
			return ExitServerExited, fmt.Errorf("server exited while the client was connected: %w", waitErr)
		}
		return ExitServerExited, errors.New("server exited while the client was connected")
	default:
		return ExitInternal, err
	}
}

// stopServer waits for the server to exit after EOF, then sends SIGTERM,
// then SIGKILL, to its whole process group.
func stopServer(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	select {
	case <-exited:
		return
	case <-time.After(grace):
	}
	signalGroup(cmd, syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(grace):
	}
	signalGroup(cmd, syscall.SIGKILL)
}

// signalGroup signals the server's process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig) // the group is gone; the process may not be
	}
}
