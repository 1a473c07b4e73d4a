package pep

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPeekFrame(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		kind   frameKind
		id     string
		key    string
		method string
		rule   string // refusal expected
	}{
		{"request, int id", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kindRequest, "1", "n1", "ping", ""},
		{"request, id 0", `{"jsonrpc":"2.0","id":0,"method":"ping"}`, kindRequest, "0", "n0", "ping", ""},
		{"request, -0 is 0", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, kindRequest, "-0", "n0", "ping", ""},
		{"request, string id", `{"jsonrpc":"2.0","id":"1","method":"ping"}`, kindRequest, `"1"`, "s1", "ping", ""},
		{"request, escaped string id", `{"jsonrpc":"2.0","id":"\u00fc","method":"ping"}`, kindRequest, `"\u00fc"`, "sü", "ping", ""},
		{"request, big id", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, kindRequest, "9007199254740993", "n9007199254740993", "ping", ""},
		{"key order free", `{"method":"tools/call","params":{},"id":"x","jsonrpc":"2.0"}`, kindRequest, `"x"`, "sx", "tools/call", ""},
		{"escaped member name", `{"jsonrpc":"2.0","id":1,"meth\u006fd":"ping"}`, kindRequest, "1", "n1", "ping", ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kindNotification, "", "", "notifications/initialized", ""},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, kindResponse, "3", "n3", "", ""},
		{"error response, null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, kindResponse, "null", "", "", ""},
		{"extra members are fine", `{"jsonrpc":"2.0","id":1,"method":"ping","x-trace":1}`, kindRequest, "1", "n1", "ping", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 0, "", "", "", "protocol.batch"},
		{"batch after spaces", `  [1]`, 0, "", "", "", "protocol.batch"},
		{"truncated", `{"jsonrpc":"2.0","id":1`, 0, "", "", "", "protocol.malformed"},
		{"invalid utf-8 escape", `{"jsonrpc":"2.0","id":1,"method":"\x"}`, 0, "", "", "", "protocol.malformed"},
		{"array member", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, 0, "", "", "", "protocol.invalid_request"},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":7}`, 0, "", "", "", "protocol.invalid_request"},
		{"both result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, 0, "", "", "", "protocol.invalid_request"},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, 0, "", "", "", "protocol.invalid_request"},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, 0, "", "", "", "protocol.invalid_request"},
		{"ID in upper case", `{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}`, 0, "", "", "", "protocol.invalid_request"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 0, "", "", "", "protocol.invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := peekFrame([]byte(tc.line))
			if tc.rule != "" {
				var fe *frameError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tc.rule, fe.rule)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.kind, f.kind)
			assert.Equal(t, tc.id, f.id)
			assert.Equal(t, tc.key, f.idKey)
			assert.Equal(t, tc.method, f.method)
		})
	}
}

func TestErrorResponse(t *testing.T) {
	for _, id := range []string{"0", `"a"`, `"ü"`, "-5", ""} {
		b := errorResponse(id, CodeRefused, "no", map[string]any{"rules": []string{"x.y"}})
		var v struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(b, &v), string(b))
		want := id
		if id == "" {
			want = "null"
		}
		assert.Equal(t, want, string(v.ID))
		assert.Equal(t, "2.0", v.JSONRPC)
		assert.Equal(t, CodeRefused, v.Error.Code)
		f, err := peekFrame(b)
		require.NoError(t, err, "airlock's own errors must be valid frames")
		assert.Equal(t, kindResponse, f.kind)
	}
}
