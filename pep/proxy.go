// Package pep is airlock's policy enforcement point: it relays MCP frames
// between a client and a server in both directions, decides the frames that
// matter with the policy, and applies the decisions (forward, refuse, taint),
// recording each one in the audit trail.
//
// The proxy sees two endpoints and frames; it does not know about processes
// or pipes (stdio.go runs it over a child process's stdio).
package pep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/airlock-dev/airlock/pep/audit"
)

// AuditLog receives one record per decision.
type AuditLog interface {
	Append(rec any) (audit.Entry, error)
}

// Options configure a Proxy.
type Options struct {
	// Server is the name of the server behind this proxy (-n), as the
	// policy data knows it.
	Server string
	// Decider decides frames. Required unless LoadPolicy is set; use
	// Unavailable when no policy could be loaded.
	Decider Decider
	// LoadPolicy, when set, loads the policy (in place of Decider and
	// ProtectedPaths) in the background when Serve starts. Frames that need
	// no decision (initialize, notifications, pings) flow meanwhile, so the
	// client's first frames are not held up by compiling the policy; a
	// frame that needs a decision waits for it. It must not fail: a policy
	// that cannot be loaded is a Policy with an Unavailable decider.
	LoadPolicy func(context.Context) Policy
	// Session is the client session's taint state. Default: a session
	// private to this proxy.
	Session Session
	// Audit receives every decision. Required.
	Audit AuditLog
	// MaxFrameBytes bounds one line; larger frames are refused.
	MaxFrameBytes int
	// ProtectedPaths are the protected-path globs the path detector
	// matches for this server; Home expands "~" in them and in arguments.
	ProtectedPaths []string
	Home           string
	// AuditArguments is how argument values reach the audit trail: "hash"
	// (default: SHA-256 and size), "omit", or "full".
	AuditArguments string
	// Logger receives operational messages (never stdout: that is the
	// client's MCP stream). Default: discard.
	Logger *slog.Logger
	// Now is the clock, for tests. Default: time.Now.
	Now func() time.Time
}

// Policy is what the proxy takes from a loaded policy: the decider, and the
// settings of the detectors that come from the policy data.
type Policy struct {
	Decider        Decider
	ProtectedPaths []string
	// Gate says which responses need a decision; nil decides them all.
	Gate *ResponseGate
}

// ErrServerClosed is returned by Serve when the server's output ended while
// the client was still connected.
var ErrServerClosed = errors.New("the server closed its output")

// Proxy relays and decides the frames of one client-server connection.
type Proxy struct {
	opts Options
	// unrecordedTaint is a taint the session store failed to record: the
	// proxy holds the session tainted itself.
	unrecordedTaint atomic.Pointer[TaintEvent]
	// clientFrame and serverFrame hold the frame each pump is handling.
	clientFrame, serverFrame frame
	// policy is valid once policyReady is closed.
	policy      Policy
	policyReady chan struct{}
	pending     pendingRequests
	tools       toolCatalog
	toClient    *FrameWriter
	toServer    *FrameWriter
	// clientDone is closed when the client's input has ended, serverDone
	// when the server's output has.
	clientDone chan struct{}
	serverDone chan struct{}
}

// New validates opts and returns a proxy.
func New(opts Options) (*Proxy, error) {
	if opts.Decider == nil && opts.LoadPolicy == nil {
		return nil, errors.New("pep: a decider or a policy loader is required")
	}
	if opts.Audit == nil {
		return nil, errors.New("pep: an audit log is required")
	}
	if opts.Session == nil {
		opts.Session = NewMemorySession("")
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = DefaultMaxFrameBytes
	}
	switch opts.AuditArguments {
	case "":
		opts.AuditArguments = "hash"
	case "hash", "omit", "full":
	default:
		return nil, fmt.Errorf("pep: audit arguments must be hash, omit or full, not %q", opts.AuditArguments)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Proxy{opts: opts, policyReady: make(chan struct{}), clientDone: make(chan struct{}), serverDone: make(chan struct{})}
	if opts.LoadPolicy == nil {
		p.policy = Policy{Decider: opts.Decider, ProtectedPaths: opts.ProtectedPaths}
		close(p.policyReady)
	}
	return p, nil
}

// loadPolicy loads the policy with Options.LoadPolicy, once.
func (p *Proxy) loadPolicy(ctx context.Context) {
	var pol Policy
	defer func() {
		// A loader that panics leaves no policy, not a dead proxy.
		if r := recover(); r != nil {
			pol = Policy{Decider: Unavailable{Err: fmt.Errorf("loading the policy failed: %v", r)}}
		}
		if pol.Decider == nil {
			pol.Decider = Unavailable{Err: errors.New("the policy loader returned no decider")}
		}
		p.policy = pol
		close(p.policyReady)
	}()
	pol = p.opts.LoadPolicy(ctx)
}

// waitPolicy returns the policy, waiting for it to load.
func (p *Proxy) waitPolicy(ctx context.Context) (Policy, error) {
	select {
	case <-p.policyReady:
		return p.policy, nil
	case <-ctx.Done():
		return Policy{}, &PolicyError{Rule: "policy.unavailable", Err: fmt.Errorf("waiting for the policy to load: %w", ctx.Err())}
	}
}

// revision names the policy in force, or "" while it loads.
func (p *Proxy) revision() string {
	select {
	case <-p.policyReady:
		return p.policy.Decider.Revision()
	default:
		return ""
	}
}

// Serve relays frames until the server's output ends. When the client's
// input ends, the server's input is closed (the server sees EOF) and Serve
// goes on relaying the server's last frames. Serve returns nil if the client
// left first, ErrServerClosed if the server did, or a read error.
//
// Each direction runs on its own goroutine, so a server-to-client request
// in the middle of a client call (sampling, elicitation) flows while the
// call is pending; order within each direction is kept.
func (p *Proxy) Serve(ctx context.Context, clientIn io.Reader, clientOut io.Writer, serverIn io.WriteCloser, serverOut io.Reader) error {
	p.toClient = NewFrameWriter(clientOut)
	p.toServer = NewFrameWriter(serverIn)
	if p.opts.LoadPolicy != nil {
		go p.loadPolicy(ctx)
	}

	go func() {
		p.pumpClient(ctx, NewFrameReader(clientIn, p.opts.MaxFrameBytes))
		// Mark the client gone before the server can see EOF and exit:
		// otherwise its exit could be taken for a server that left first.
		close(p.clientDone)
		if err := serverIn.Close(); err != nil {
			p.opts.Logger.Debug("closing the server's input", "err", err)
		}
	}()

	err := p.pumpServer(ctx, NewFrameReader(serverOut, p.opts.MaxFrameBytes))
	close(p.serverDone)
	p.failPending(ctx)
	if err != nil {
		return err
	}
	select {
	case <-p.clientDone:
		return nil
	default:
		return ErrServerClosed
	}
}

// ClientDone is closed when the client's input has ended (and the server's
// input has been closed).
func (p *Proxy) ClientDone() <-chan struct{} { return p.clientDone }

func (p *Proxy) pumpClient(ctx context.Context, r *FrameReader) {
	defer p.flushToServer()
	for {
		line, err := r.Next()
		if err != nil {
			var tooLarge *FrameTooLargeError
			if errors.As(err, &tooLarge) {
				p.refuseOversized(ctx, ClientToServer, tooLarge)
				continue
			}
			if !errors.Is(err, io.EOF) {
				p.opts.Logger.Warn("reading from the client", "err", err)
			}
			return
		}
		p.handleClientFrame(ctx, line)
		releaseIfLarge(len(line))
		if !r.HasFrame() {
			p.flushToServer() // before waiting for the client
		}
	}
}

func (p *Proxy) pumpServer(ctx context.Context, r *FrameReader) error {
	defer p.flushToClient()
	for {
		line, err := r.Next()
		if err != nil {
			var tooLarge *FrameTooLargeError
			if errors.As(err, &tooLarge) {
				p.refuseOversized(ctx, ServerToClient, tooLarge)
				continue
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading from the server: %w", err)
		}
		p.handleServerFrame(ctx, line)
		releaseIfLarge(len(line))
		if !r.HasFrame() {
			p.flushToClient() // before waiting for the server
		}
	}
}

// largeFrame is the size from which a relayed frame's memory is handed back
// at once rather than when the GC gets to it.
const largeFrame = 4 << 20

// releaseIfLarge returns the memory of a large frame, now garbage, to the
// OS. Left to the GC, each large frame's buffers would stay resident until
// the heap doubled, and a run of 16 MiB results would hold several times
// the frame. A forced collection costs a few milliseconds, small beside
// the time it takes to scan such a frame.
func releaseIfLarge(n int) {
	if n >= largeFrame {
		debug.FreeOSMemory()
	}
}

// decidedRequests are the client requests whose request phase is decided.
var decidedRequests = map[string]bool{"tools/call": true, "resources/read": true}

// decidedResponses are the client requests whose response phase is decided.
var decidedResponses = map[string]bool{"tools/call": true, "tools/list": true, "resources/read": true, "prompts/get": true}

// decidedServerRequests are the server-to-client requests that are decided.
var decidedServerRequests = map[string]bool{"sampling/createMessage": true, "elicitation/create": true}

func (p *Proxy) handleClientFrame(ctx context.Context, line []byte) {
	f := &p.clientFrame
	defer func() { *f = frame{} }() // let go of the line: it may be 16 MiB
	if err := f.peek(line); err != nil {
		p.refuseClientFrame(ctx, line, err)
		return
	}
	switch f.kind {
	case kindRequest:
		req := pendingRequest{id: f.id, method: f.method}
		if decidedRequests[f.method] {
			out := p.decide(ctx, f, PhaseRequest, ClientToServer, req)
			if !out.allow {
				p.sendToClient(errorResponse(f.id, out.code, out.message, out.data))
				return
			}
			req.tool, req.uri = out.tool, out.uri
		}
		// Track before forwarding: the response may come back at once.
		p.pending.add(f.idKey, req)
		if err := p.toServer.Write(line); err != nil {
			p.pending.take(f.idKey)
			p.sendToClient(errorResponse(f.id, CodeServerUnavailable,
				"airlock: the server is not accepting input: "+err.Error(), map[string]any{"rule": "server.unavailable"}))
		}
	case kindNotification:
		if f.method == "notifications/cancelled" {
			// A cancelled request may never be answered; forget it so the
			// table does not grow.
			if key, ok := idKey(f.params.Get("requestId")); ok {
				p.pending.take(key)
			}
		}
		p.passToServer(line)
	case kindResponse:
		p.passToServer(line)
	}
}

func (p *Proxy) handleServerFrame(ctx context.Context, line []byte) {
	f := &p.serverFrame
	defer func() { *f = frame{} }() // let go of the line: it may be 16 MiB
	if err := f.peek(line); err != nil {
		p.dropServerFrame(line, err)
		return
	}
	switch f.kind {
	case kindResponse:
		req, ok := p.pending.take(f.idKey)
		if !ok {
			p.recordDrop(ServerToClient, "protocol.unsolicited_response", f.id,
				"the server answered a request id the client has no request pending for")
			return
		}
		if decidedResponses[req.method] {
			out := p.decide(ctx, f, PhaseResponse, ServerToClient, req)
			if !out.allow {
				p.sendToClient(errorResponse(req.id, out.code, out.message, out.data))
				return
			}
			if req.method == "tools/list" {
				p.tools.update(f.result)
			}
		}
		p.passToClient(line)
	case kindRequest:
		if decidedServerRequests[f.method] {
			out := p.decide(ctx, f, PhaseRequest, ServerToClient, pendingRequest{method: f.method})
			if !out.allow {
				p.forwardToServer(errorResponse(f.id, out.code, out.message, out.data))
				return
			}
		}
		p.passToClient(line)
	case kindNotification:
		p.passToClient(line)
	}
}

// sendToClient writes a frame to the client. A client that cannot be
// written to has gone; its input will end too, which shuts the server down.
func (p *Proxy) sendToClient(frame []byte) {
	if err := p.toClient.Write(frame); err != nil {
		p.opts.Logger.Debug("writing to the client", "err", err)
	}
}

// passToClient and passToServer relay a frame from the pump that owns that
// direction: it may be deferred, to go out with the next frames of a burst;
// the pump flushes before it waits for input. (A frame written from the
// other direction's pump, such as a refusal, uses sendToClient or
// forwardToServer, which write at once.)
func (p *Proxy) passToClient(frame []byte) {
	if err := p.toClient.WriteDeferred(frame); err != nil {
		p.opts.Logger.Debug("writing to the client", "err", err)
	}
}

func (p *Proxy) passToServer(frame []byte) {
	if err := p.toServer.WriteDeferred(frame); err != nil {
		p.opts.Logger.Debug("writing to the server", "err", err)
	}
}

func (p *Proxy) flushToClient() {
	if err := p.toClient.Flush(); err != nil {
		p.opts.Logger.Debug("writing to the client", "err", err)
	}
}

func (p *Proxy) flushToServer() {
	if err := p.toServer.Flush(); err != nil {
		p.opts.Logger.Debug("writing to the server", "err", err)
	}
}

func (p *Proxy) forwardToServer(frame []byte) {
	if err := p.toServer.Write(frame); err != nil {
		p.opts.Logger.Debug("writing to the server", "err", err)
	}
}

// refuseClientFrame answers a client frame that cannot be relayed. For a
// batch, every member with an id is answered, so no request is left waiting.
func (p *Proxy) refuseClientFrame(ctx context.Context, line []byte, err error) {
	var fe *frameError
	if !errors.As(err, &fe) {
		fe = &frameError{rule: "protocol.malformed", code: CodeParseError, msg: err.Error()}
	}
	ids := []string{fe.id}
	if fe.rule == "protocol.batch" {
		ids = ids[:0]
		gjson.ParseBytes(line).ForEach(func(_, member gjson.Result) bool {
			if id := validID(member.Get("id")); id != "" {
				ids = append(ids, id)
			}
			return true
		})
		if len(ids) == 0 {
			ids = append(ids, "")
		}
	}
	rec := p.newRecord(ClientToServer, "", "", "")
	id := p.recordRefusal(ctx, rec, fe.rule, fe.msg)
	for _, reqID := range ids {
		p.sendToClient(errorResponse(reqID, fe.code, "airlock refused the frame: "+fe.msg+" ("+fe.rule+")",
			refusalData(id, []string{fe.rule}, nil)))
	}
}

// dropServerFrame handles a server line that cannot be relayed: it is not
// passed on (a client could choke on it), it is recorded, and if it answered
// a pending request, the client gets an error instead of waiting forever.
func (p *Proxy) dropServerFrame(line []byte, err error) {
	var fe *frameError
	if !errors.As(err, &fe) {
		fe = &frameError{rule: "protocol.malformed", msg: err.Error()}
	}
	p.opts.Logger.Warn("dropping a frame from the server", "rule", fe.rule, "reason", fe.msg, "bytes", len(line))
	p.answerPending(fe.id, fe.rule, "the server sent a frame airlock cannot relay: "+fe.msg)
	p.recordDrop(ServerToClient, fe.rule, fe.id, "dropped a frame from the server: "+fe.msg)
}

// refuseOversized answers a frame over the size limit: a client request gets
// an error; a server frame is dropped and the call it answered gets one.
func (p *Proxy) refuseOversized(ctx context.Context, dir string, e *FrameTooLargeError) {
	limit := fmt.Sprintf("larger than the %d-byte limit (max_frame_bytes)", e.Limit)
	msg := "the frame is " + limit
	id := validID(gjson.GetBytes(e.Prefix, "id"))
	if dir == ClientToServer {
		rec := p.newRecord(dir, "", "", id)
		decisionID := p.recordRefusal(ctx, rec, "protocol.frame_too_large", msg)
		p.sendToClient(errorResponse(id, CodeInvalidRequest, "airlock refused the frame: "+msg+" (protocol.frame_too_large)",
			refusalData(decisionID, []string{"protocol.frame_too_large"}, nil)))
		return
	}
	p.opts.Logger.Warn("dropping an oversized frame from the server", "limit", e.Limit)
	p.answerPending(id, "protocol.frame_too_large", "the server's answer is "+limit)
	p.recordDrop(dir, "protocol.frame_too_large", id, "dropped a frame from the server: "+msg)
}

// answerPending sends an error for a pending client request whose answer
// could not be relayed.
func (p *Proxy) answerPending(id, rule, msg string) {
	if id == "" {
		return
	}
	key, ok := idKey(gjson.Parse(id))
	if !ok {
		return
	}
	if req, ok := p.pending.take(key); ok {
		p.sendToClient(errorResponse(req.id, CodeServerUnavailable, "airlock: "+msg+" ("+rule+")", map[string]any{"rule": rule}))
	}
}

// failPending answers every request still in flight when the server's
// output ends: the server can no longer answer them.
func (p *Proxy) failPending(ctx context.Context) {
	for _, req := range p.pending.drain() {
		rec := p.newRecord(ServerToClient, req.method, req.tool, req.id)
		rec.Phase = PhaseResponse
		id := p.recordRefusal(ctx, rec, "server.unavailable", "the server exited before answering")
		p.sendToClient(errorResponse(req.id, CodeServerUnavailable,
			"airlock: the server exited before answering "+req.method+" (server.unavailable)",
			refusalData(id, []string{"server.unavailable"}, nil)))
	}
}

// pendingRequest is a client request the server has not answered yet.
type pendingRequest struct {
	id     string // raw JSON id, to answer with
	method string
	tool   string // for tools/call
	uri    string // for resources/read
}

// pendingRequests maps canonical ids of client requests to what they asked.
// Ids of server-to-client requests live in their own namespace and are not
// tracked here, so the two sides' ids may collide freely.
type pendingRequests struct {
	mu sync.Mutex
	m  map[string]pendingRequest
}

func (t *pendingRequests) add(key string, r pendingRequest) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[string]pendingRequest)
	}
	t.m[key] = r
}

func (t *pendingRequests) take(key string) (pendingRequest, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.m[key]
	if ok {
		delete(t.m, key)
	}
	return r, ok
}

func (t *pendingRequests) drain() []pendingRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]pendingRequest, 0, len(t.m))
	for _, r := range t.m {
		out = append(out, r)
	}
	t.m = nil
	return out
}

func (t *pendingRequests) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
