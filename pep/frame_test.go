package pep

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, fr *FrameReader) (frames []string, tooLarge int) {
	t.Helper()
	for {
		f, err := fr.Next()
		var tl *FrameTooLargeError
		switch {
		case errors.As(err, &tl):
			tooLarge++
			continue
		case errors.Is(err, io.EOF):
			return frames, tooLarge
		case err != nil:
			t.Fatal(err)
		}
		frames = append(frames, string(f))
	}
}

func TestFrameReader(t *testing.T) {
	long := strings.Repeat("a", 3*readChunk+17)
	huge := strings.Repeat("h", 16<<20)
	tests := []struct {
		name     string
		in       string
		max      int
		want     []string
		tooLarge int
	}{
		{"lines", "a\nb\n", 0, []string{"a", "b"}, 0},
		{"crlf", "a\r\nb\r\n", 0, []string{"a", "b"}, 0},
		{"blank lines skipped", "\n\n  \na\n\t\n", 0, []string{"a"}, 0},
		{"last line without newline", "a\nb", 0, []string{"a", "b"}, 0},
		{"unicode kept", "{\"x\":\"ü☃\u2028\"}\n", 0, []string{"{\"x\":\"ü☃\u2028\"}"}, 0},
		{"longer than the buffer", long + "\nz\n", 0, []string{long, "z"}, 0},
		{"16 MiB", huge + "\n" + "after\n", 0, []string{huge, "after"}, 0},
		{"over the limit, then on", long + "\nok\n", readChunk, []string{"ok"}, 1},
		{"exactly the limit", long + "\n", len(long), []string{long}, 0},
		{"one over the limit", long + "x\n", len(long), nil, 1},
		{"over the limit at EOF", long, readChunk, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, tl := readAll(t, NewFrameReader(strings.NewReader(tc.in), tc.max))
			assert.Equal(t, len(tc.want), len(got))
			for i := range min(len(got), len(tc.want)) {
				assert.True(t, got[i] == tc.want[i], "frame %d differs", i)
			}
			assert.Equal(t, tc.tooLarge, tl)
		})
	}
}

func TestFrameTooLargeKeepsPrefix(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"x":"` + strings.Repeat("y", 2*readChunk) + `"}}`
	_, err := NewFrameReader(strings.NewReader(line+"\n"), readChunk).Next()
	var tl *FrameTooLargeError
	require.ErrorAs(t, err, &tl)
	assert.True(t, bytes.HasPrefix([]byte(line), tl.Prefix))
	assert.Contains(t, string(tl.Prefix), `"id":77`)
}

// TestFrameWriterKeepsFramesWhole: writers on both proxy directions share
// an endpoint; frames never interleave.
func TestFrameWriterKeepsFramesWhole(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	small := strings.Repeat("s", 100)
	big := strings.Repeat("B", 2*readChunk)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frame := small
			if i%2 == 0 {
				frame = big
			}
			for range 50 {
				assert.NoError(t, fw.Write([]byte(frame)))
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 400)
	for _, l := range lines {
		assert.True(t, l == small || l == big, "a torn frame of %d bytes", len(l))
	}
}

// countingWriter counts write calls.
type countingWriter struct {
	bytes.Buffer
	calls int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.calls++
	return w.Buffer.Write(b)
}

// TestFrameWriterDefers: deferred frames wait for a Flush or the next
// Write, go out in order in one write call, and never grow past maxPending;
// a large frame flushes what is pending first.
func TestFrameWriterDefers(t *testing.T) {
	var w countingWriter
	fw := NewFrameWriter(&w)
	require.NoError(t, fw.WriteDeferred([]byte("a")))
	require.NoError(t, fw.WriteDeferred([]byte("b")))
	assert.Zero(t, w.calls, "deferred frames are not written yet")
	require.NoError(t, fw.Write([]byte("c")))
	assert.Equal(t, "a\nb\nc\n", w.String())
	assert.Equal(t, 1, w.calls, "one write call for the three")

	w.Reset()
	w.calls = 0
	require.NoError(t, fw.WriteDeferred([]byte("d")))
	require.NoError(t, fw.Flush())
	require.NoError(t, fw.Flush())
	assert.Equal(t, "d\n", w.String())
	assert.Equal(t, 1, w.calls, "an empty flush writes nothing")

	w.Reset()
	w.calls = 0
	small := strings.Repeat("s", 1000)
	for range 200 { // 200 KB of deferred frames, never flushed
		require.NoError(t, fw.WriteDeferred([]byte(small)))
	}
	assert.Equal(t, 200*1001/maxPending, w.calls, "the queue is written each time it reaches maxPending")
	assert.Less(t, len(fw.pending), maxPending, "and never holds more")
	big := strings.Repeat("B", 2*readChunk)
	require.NoError(t, fw.WriteDeferred([]byte(big)))
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	require.Len(t, lines, 201, "a large frame flushes the queue before it, in order")
	assert.Equal(t, big, lines[200])
}
