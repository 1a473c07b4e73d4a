// Package policydata generates the policy data document of the size people
// run, shared by the end-to-end benchmark and the decision benchmark so both
// measure the same policy.
package policydata

import (
	"encoding/json"
	"fmt"
)

// Realistic returns the data document: 50 servers (one named server, with
// fetch/read_mail/read_channel untrusted and the writing tools outbound), 500
// tool names in untrusted/outbound lists, 200 allow_hosts entries (exact and
// wildcard, github.com among them), 20 live waivers.
func Realistic(server string) []byte {
	servers := map[string]any{}
	for s := range 50 {
		name := fmt.Sprintf("srv%02d", s)
		var untrusted, outbound []string
		if s == 0 {
			name = server
			untrusted = []string{"fetch", "read_mail", "read_channel"}
			outbound = []string{"send_message", "post_message", "transfer", "write_file", "delete_file"}
		}
		for t := len(untrusted) + len(outbound); t < 10; t++ {
			tool := fmt.Sprintf("tool_%02d_%d", s, t)
			if t%2 == 0 {
				untrusted = append(untrusted, tool)
			} else {
				outbound = append(outbound, tool)
			}
		}
		servers[name] = map[string]any{"untrusted": untrusted, "outbound": outbound}
	}
	hosts := []string{"github.com"}
	for i := 1; len(hosts) < 200; i++ {
		if i%2 == 0 {
			hosts = append(hosts, fmt.Sprintf("*.svc%03d.example.net", i))
		} else {
			hosts = append(hosts, fmt.Sprintf("api%03d.example.com", i))
		}
	}
	var waivers []any
	for i := range 20 {
		waivers = append(waivers, map[string]any{
			"id": fmt.Sprintf("W-2026-%03d", i), "rule": "egress.host_not_allowed",
			"server": fmt.Sprintf("srv%02d", i+1), "tool": fmt.Sprintf("tool_%02d_1", i+1),
			"match":   map[string]string{"url": fmt.Sprintf("https://mirror%02d.internal.example/*", i)},
			"expires": "2099-12-31", "reason": "internal mirror", "approved_by": "sec-team",
		})
	}
	b, err := json.MarshalIndent(map[string]any{"allow_hosts": hosts, "servers": servers, "waivers": waivers, "mode": "enforce"}, "", " ")
	if err != nil {
		panic(err)
	}
	return b
}
