package detectors

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corpusCase is one tool call's arguments in testdata/detectors: a
// .jsonl file holds one case a line, a .json file one case.
type corpusCase struct {
	Name      string            `json:"name"`
	Class     string            `json:"class"` // benign: file, version, code, binary (no host at all), prose
	Host      string            `json:"host"`  // hostile: the destination it must name
	Arguments any               `json:"arguments"`
	Formats   map[string]string `json:"formats"`
	file      string
}

func loadCorpus(t *testing.T, dir string) []corpusCase {
	t.Helper()
	var cases []corpusCase
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "detectors", dir, "*.json*"))
	require.NoError(t, err)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		var docs [][]byte
		if strings.HasSuffix(p, ".jsonl") {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
					docs = append(docs, bytes.Clone(line))
				}
			}
			require.NoError(t, sc.Err())
		} else {
			docs = append(docs, data)
		}
		for _, doc := range docs {
			d := json.NewDecoder(bytes.NewReader(doc))
			d.UseNumber()
			var c corpusCase
			require.NoError(t, d.Decode(&c), "%s: %s", p, doc)
			require.NotEmpty(t, c.Name, p)
			c.file = filepath.Base(p)
			cases = append(cases, c)
		}
	}
	return cases
}

// TestBenignCorpus: realistic arguments name no destination; files,
// versions, code and binary name no host at all.
func TestBenignCorpus(t *testing.T) {
	cases := loadCorpus(t, "benign")
	require.GreaterOrEqual(t, len(cases), 60)
	for _, c := range cases {
		t.Run(c.file+"/"+c.Name, func(t *testing.T) {
			require.Contains(t, []string{"file", "version", "code", "binary", "prose"}, c.Class)
			r := ScanArguments(c.Arguments, Options{Formats: c.Formats})
			for _, h := range r.Hosts {
				assert.False(t, h.Destination, "destination host hit: %+v", h)
			}
			for _, e := range r.Emails {
				assert.False(t, e.Destination, "destination email: %+v", e)
			}
			if c.Class != "prose" {
				assert.Empty(t, r.Hosts, "a %s case names no host", c.Class)
				assert.Empty(t, r.Emails)
			}
			for _, h := range ScanContent(c.Arguments, Options{}).Hosts {
				assert.False(t, h.Destination, "as content: %+v", h)
			}
		})
	}
}

// TestHostileCorpus: each case names its host as a destination.
func TestHostileCorpus(t *testing.T) {
	cases := loadCorpus(t, "hostile")
	require.GreaterOrEqual(t, len(cases), 40)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			require.NotEmpty(t, c.Host)
			r := ScanArguments(c.Arguments, Options{Formats: c.Formats})
			var dests []string
			for _, h := range r.Hosts {
				if h.Destination {
					dests = append(dests, h.Host)
				}
			}
			assert.Contains(t, dests, c.Host, "hits: %+v", r.Hosts)
		})
	}
}
