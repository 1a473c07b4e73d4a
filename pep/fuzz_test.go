package pep

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzPeekFrame: any line is classified or refused, never a panic, and a
// frame airlock accepts has the shape its kind promises.
func FuzzPeekFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"u":"https://a"}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","method":"n"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"x"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"meth\u006fd":"ping"}`,
		"\xff\xfe", `{}`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fr, err := peekFrame(line)
		if err != nil {
			var fe *frameError
			if !errors.As(err, &fe) || fe.rule == "" || fe.code == 0 {
				t.Fatalf("refusal without a rule or code: %v", err)
			}
			return
		}
		switch fr.kind {
		case kindRequest:
			if fr.method == "" && fr.idKey == "" || fr.id == "" {
				t.Fatalf("request without method or id: %q", line)
			}
		case kindNotification:
			if fr.id != "" {
				t.Fatalf("notification with an id: %q", line)
			}
		case kindResponse:
			if fr.method != "" {
				t.Fatalf("response with a method: %q", line)
			}
		default:
			t.Fatalf("no kind: %q", line)
		}
		_ = hasAmbiguousKeys(fr.params) // must not panic on any params
	})
}

// FuzzFrameReader: the frames read back are the input's non-blank lines,
// whatever the bytes and the limit.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n c \n"), 3)
	f.Add(bytes.Repeat([]byte("x"), 70000), 65536)
	f.Add([]byte("\n\n\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit <= 0 || limit > 1<<20 {
			limit = 1 << 20
		}
		fr := NewFrameReader(bytes.NewReader(in), limit)
		var got [][]byte
		for {
			frame, err := fr.Next()
			var tl *FrameTooLargeError
			if errors.As(err, &tl) {
				continue
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(frame) > limit {
				t.Fatalf("a frame of %d bytes passed a %d-byte limit", len(frame), limit)
			}
			got = append(got, append([]byte(nil), frame...))
		}
		var want [][]byte
		for _, l := range bytes.Split(in, []byte("\n")) {
			l = bytes.TrimSuffix(l, []byte("\r"))
			if len(bytes.TrimSpace(l)) > 0 && len(l) <= limit {
				want = append(want, l)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("got %d frames, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d: got %q want %q", i, got[i], want[i])
			}
		}
	})
}
