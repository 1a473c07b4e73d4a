package pep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// JSON-RPC error codes airlock answers with. The standard codes keep their
// JSON-RPC meaning; airlock's own sit in the implementation-defined server
// range below the block that MCP reserves (-32020 to -32099).
const (
	CodeParseError        = -32700 // the frame is not JSON
	CodeInvalidRequest    = -32600 // batch, missing tool name, bad id, too large
	CodeRefused           = -32010 // a policy rule refused the frame
	CodePolicyUnavailable = -32011 // no policy, or it could not decide: fail closed
	CodeServerUnavailable = -32012 // the server exited or cannot be written to
)

type frameKind int

const (
	kindRequest frameKind = iota + 1
	kindNotification
	kindResponse
)

// frame is what airlock learns from a line without decoding it. Its strings
// are copies: the line's buffer is reused once the frame has been handled.
type frame struct {
	raw    []byte
	kind   frameKind
	id     string // raw JSON of the id, as written ("" when absent)
	idKey  string // canonical id for matching a response to its request
	method string
	params gjson.Result // views into raw: valid only while raw is
	result gjson.Result
	errObj gjson.Result // a response's "error" member
}

// frameError is a frame that cannot be relayed. It carries the rule ID of
// the refusal and, when the frame had one, the id to answer.
type frameError struct {
	rule string
	code int
	id   string
	msg  string
}

func (e *frameError) Error() string { return e.msg }

// envelopeKeys are the top-level members a JSON-RPC peer acts on, each with
// a bit for the set of those seen in a frame.
var envelopeKeys = map[string]uint8{"jsonrpc": 1, "id": 2, "method": 4, "params": 8, "result": 16, "error": 32}

// knownMethods are method names kept as constants, so that peeking a frame
// with one of them does not copy its name (the frame's buffer is reused).
var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, name := range []string{"initialize", "ping", "server/discover", "tools/list", "tools/call",
		"resources/list", "resources/read", "resources/templates/list", "resources/subscribe",
		"resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
		"sampling/createMessage", "elicitation/create", "roots/list", "subscriptions/listen",
		"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/message", "notifications/tools/list_changed", "notifications/resources/list_changed",
		"notifications/prompts/list_changed", "notifications/resources/updated", "notifications/roots/list_changed"} {
		m[name] = name
	}
	return m
}()

// methodName is name, as a constant when it is a known method, else a copy.
func methodName(name string) string {
	if known, ok := knownMethods[name]; ok {
		return known
	}
	return strings.Clone(name)
}

// peekFrame classifies a line. It validates the JSON and reads only the
// top-level members, so a large result is scanned once and never decoded.
//
// It refuses what different parsers could read differently: duplicate
// members (first-wins versus last-wins) and members that differ from an
// envelope key only in case (Go's encoding/json matches field names
// case-insensitively), so that airlock and the server always agree on which
// method a frame calls.
func peekFrame(line []byte) (*frame, error) {
	f := new(frame)
	if err := f.peek(line); err != nil {
		return nil, err
	}
	return f, nil
}

// peek is peekFrame into f, which is reset first: a pump peeks every frame
// into the same one, since it handles one frame at a time.
func (f *frame) peek(line []byte) error {
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return &frameError{rule: "protocol.batch", code: CodeInvalidRequest,
			msg: "JSON-RPC batches are not part of MCP (removed in 2025-06-18); send one message per line"}
	}
	view := unsafe.String(unsafe.SliceData(line), len(line))
	if !gjson.Valid(view) {
		return &frameError{rule: "protocol.malformed", code: CodeParseError, msg: "the frame is not valid JSON"}
	}
	root := gjson.Parse(view)
	if !root.IsObject() {
		return &frameError{rule: "protocol.malformed", code: CodeInvalidRequest, msg: "a JSON-RPC message must be a JSON object"}
	}
	*f = frame{raw: line}
	var version, id, method gjson.Result
	var hasResult, hasError bool
	var seen uint8
	var bad string
	root.ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		if bit := envelopeKeys[key]; bit != 0 {
			if seen&bit != 0 {
				bad = fmt.Sprintf("duplicate member %q", key)
				return false
			}
			seen |= bit
		} else if envelopeKeys[strings.ToLower(key)] != 0 {
			bad = fmt.Sprintf("member %q differs from %q only in case", key, strings.ToLower(key))
			return false
		}
		switch key {
		case "jsonrpc":
			version = v
		case "id":
			id = v
		case "method":
			method = v
		case "params":
			f.params = v
		case "result":
			f.result, hasResult = v, true
		case "error":
			f.errObj, hasError = v, true
		}
		return true
	})
	idRaw := strings.Clone(id.Raw)
	if bad != "" {
		return &frameError{rule: "protocol.invalid_request", code: CodeInvalidRequest, id: validID(id), msg: bad}
	}
	if version.Type != gjson.String || version.Str != "2.0" {
		return &frameError{rule: "protocol.invalid_request", code: CodeInvalidRequest, id: validID(id),
			msg: `"jsonrpc" must be "2.0"`}
	}
	if method.Exists() {
		if method.Type != gjson.String {
			return &frameError{rule: "protocol.invalid_request", code: CodeInvalidRequest, id: validID(id), msg: `"method" must be a string`}
		}
		f.method = methodName(method.Str)
		if !id.Exists() {
			f.kind = kindNotification
			return nil
		}
		key, ok := idKey(id)
		if !ok {
			return &frameError{rule: "protocol.invalid_request", code: CodeInvalidRequest,
				msg: "a request id must be a string or an integer"}
		}
		f.kind, f.id, f.idKey = kindRequest, idRaw, key
		return nil
	}
	if !hasResult && !hasError || hasResult && hasError || !id.Exists() {
		return &frameError{rule: "protocol.invalid_request", code: CodeInvalidRequest, id: validID(id),
			msg: "not a request, notification or response"}
	}
	f.kind, f.id = kindResponse, idRaw
	f.idKey, _ = idKey(id) // a null id (an error about an unreadable request) matches nothing
	return nil
}

// idKey canonicalizes a request id so that a response echoing it matches:
// strings and integers are distinct namespaces, so "1" and 1 differ.
func idKey(id gjson.Result) (string, bool) {
	switch id.Type {
	case gjson.String:
		return "s" + id.Str, true
	case gjson.Number:
		if strings.ContainsAny(id.Raw, ".eE") {
			return "", false
		}
		if id.Raw == "-0" {
			return "n0", true
		}
		return "n" + id.Raw, true
	}
	return "", false
}

// validID returns the raw id if it is one a response may carry, else "".
func validID(id gjson.Result) string {
	if _, ok := idKey(id); ok {
		return strings.Clone(id.Raw)
	}
	return ""
}

// errorResponse builds a JSON-RPC error response. An empty id becomes null,
// as JSON-RPC requires when the request's id could not be read.
func errorResponse(id string, code int, message string, data any) []byte {
	if id == "" {
		id = "null"
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", json.RawMessage(id), rpcError{code, message, data}})
	if err != nil {
		// Only data can fail to marshal; the refusal must still go out.
		body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id),
			"error": map[string]any{"code": code, "message": message}})
	}
	return body
}

// hasAmbiguousKeys reports, for a decided frame's params, a duplicate member
// or a case-only variant of another member at any depth: the policy and the
// server must see the same arguments.
func hasAmbiguousKeys(v gjson.Result) string {
	if !v.IsObject() && !v.IsArray() {
		return ""
	}
	var bad string
	var seen map[string]string
	v.ForEach(func(k, child gjson.Result) bool {
		if k.Type == gjson.String {
			if seen == nil {
				seen = make(map[string]string)
			}
			fold := strings.ToLower(k.Str)
			if prev, ok := seen[fold]; ok {
				if prev == k.Str {
					bad = fmt.Sprintf("duplicate member %q", k.Str)
				} else {
					bad = fmt.Sprintf("members %q and %q differ only in case", prev, k.Str)
				}
				return false
			}
			seen[fold] = k.Str
		}
		bad = hasAmbiguousKeys(child)
		return bad == ""
	})
	return bad
}
