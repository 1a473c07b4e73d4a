package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corpusCase is one case of testdata/detectors/{hostile,benign}.
type corpusCase struct {
	Name      string            `json:"name"`
	Host      string            `json:"host"`
	Arguments json.RawMessage   `json:"arguments"`
	Formats   map[string]string `json:"formats"` // the tool's schema formats the case needs
}

func readCorpus(t *testing.T, dir string) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "detectors", dir, "*.json*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var cases []corpusCase
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		if strings.HasSuffix(file, ".json") {
			var c corpusCase
			require.NoError(t, json.Unmarshal(raw, &c), file)
			var compact bytes.Buffer // one frame is one line
			require.NoError(t, json.Compact(&compact, c.Arguments))
			c.Arguments = compact.Bytes()
			cases = append(cases, c)
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var c corpusCase
			require.NoError(t, json.Unmarshal(sc.Bytes(), &c), "%s: %s", file, sc.Text())
			cases = append(cases, c)
		}
	}
	return cases
}

// TestEveryHostSpellingIsRefused: through the airlock binary, on a clean
// session, a call naming a host outside the allow-list is refused however
// the host is written, and never reaches the server; the benign corpus
// (file names, versions, code, prose, images) passes through.
func TestEveryHostSpellingIsRefused(t *testing.T) {
	env := newQuarantineEnv(t, `{"allow_hosts": ["github.com", "*.githubusercontent.com"], "servers": {"tools": {}}}`)
	p := env.start("tools", "egress")
	egress := map[string]bool{"egress.host_not_allowed": true, "egress.lookalike_host": true}

	hostile := readCorpus(t, "hostile")
	for _, c := range hostile {
		if c.Formats != nil {
			continue // needs a tool schema the fake server does not have; pep's tests cover formats
		}
		t.Run("hostile/"+c.Name, func(t *testing.T) {
			resp := p.request("tools/call", fmt.Sprintf(`{"name":"echo","arguments":%s}`, c.Arguments))
			rules := refusalRules(t, resp)
			require.NotEmpty(t, rules, "not refused: %s", c.Arguments)
			for _, r := range rules {
				assert.True(t, egress[r], "refused by %s, want an egress rule", r)
			}
			assert.Contains(t, resp, c.Host, "the refusal names the host")
		})
	}
	benign := readCorpus(t, "benign")
	for _, c := range benign {
		t.Run("benign/"+c.Name, func(t *testing.T) {
			resp := p.request("tools/call", fmt.Sprintf(`{"name":"echo","arguments":%s}`, c.Arguments))
			assert.Empty(t, refusalRules(t, resp), "benign arguments refused: %s", c.Arguments)
		})
	}

	// The server's own log: exactly the benign calls arrived.
	assert.Len(t, p.received(), len(benign), "only the benign calls reached the server")
}

// refusalRules returns the rule IDs of an airlock refusal, or nil.
func refusalRules(t *testing.T, resp string) []string {
	t.Helper()
	var r struct {
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Rules []string `json:"rules"`
			} `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &r), resp)
	if r.Error == nil {
		return nil
	}
	require.Equal(t, -32010, r.Error.Code, resp)
	return r.Error.Data.Rules
}
