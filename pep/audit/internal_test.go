package audit

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lone writer reads the tail once, at Open; after that each Append is
// one fstat and one write. Tail reads happen only when someone else wrote.
func TestTailReadOnlyWhenFileChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w1, err := Open(path)
	require.NoError(t, err)
	defer w1.Close()
	for range 100 {
		_, err := w1.Append(map[string]int{"a": 1})
		require.NoError(t, err)
	}
	assert.Equal(t, 1, w1.resyncs)

	w2, err := Open(path)
	require.NoError(t, err)
	defer w2.Close()
	_, err = w2.Append(map[string]int{"b": 1})
	require.NoError(t, err)
	assert.Equal(t, 1, w2.resyncs, "w2 opened after w1's writes: no extra read")

	_, err = w1.Append(map[string]int{"a": 2})
	require.NoError(t, err)
	assert.Equal(t, 2, w1.resyncs, "w1 must notice w2's record")
	e, err := w1.Append(map[string]int{"a": 3})
	require.NoError(t, err)
	assert.Equal(t, 2, w1.resyncs)
	assert.Equal(t, int64(103), e.Seq)
}

func TestCheckObject(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{`{}`, true},
		{`{"a":{"seq":1},"b":[{"hash":1}],"c":"\"seq\":"}`, true},
		{`{"a":"x\\","seq":1}`, false}, // escaped backslash before the closing quote
		{`{"a":"x\\\"","b":1}`, true},
		{`{"hash":1}`, false},
		{`{"a":1,"prev":1}`, false},
		{`{"\u0068ash":1}`, false},
		{`[]`, false},
		{`"{}"`, false},
		{`{`, false},
	}
	for _, tt := range tests {
		err := checkObject([]byte(tt.in))
		assert.Equal(t, tt.ok, err == nil, "%s: %v", tt.in, err)
	}
}
