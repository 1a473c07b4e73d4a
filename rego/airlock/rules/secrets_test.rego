package airlock_test.rules.secrets

import data.airlock_test.lib

rule := "secrets.outbound"

servers := {
	"slack": {"untrusted": ["read_channel"], "outbound": ["post_message"]},
	"mail": {"outbound": "*"},
	"fs": {"outbound": ["*"]},
	"single": {"outbound": "upload"},
	"odd": {"outbound": 7},
}

aws := {"kind": "aws_access_key", "path": "/text", "redacted": "AKIA…MPLE"}

gh := {"kind": "github_token", "path": "/text", "redacted": "ghp_…x9Qz"}

call(server, tool, hits) := lib.request({"server": server, "tool": {"name": tool}, "detectors": {"secrets": hits}})

cases := {
	"outbound tool, secret": {"input": call("slack", "post_message", [aws]), "refused": true},
	"outbound tool, decoded secret": {"input": call("slack", "post_message", [object.union(aws, {"decoded": "base64"})]), "refused": true},
	"outbound tool, no secret": {"input": call("slack", "post_message", []), "refused": false},
	"outbound tool, secrets null": {"input": call("slack", "post_message", null), "refused": false},
	"tool not outbound, secret": {"input": call("slack", "read_channel", [aws]), "refused": false},
	"outbound is the string *": {"input": call("mail", "send", [aws]), "refused": true},
	"outbound lists *": {"input": call("fs", "write_file", [aws]), "refused": true},
	"outbound a single name": {"input": call("single", "upload", [aws]), "refused": true},
	"outbound a single other name": {"input": call("single", "download", [aws]), "refused": false},
	"malformed outbound": {"input": call("odd", "post_message", [aws]), "refused": false},
	"server without outbound": {"input": call("web", "fetch", [aws]), "refused": false},
	"unknown server": {"input": call("other", "post_message", [aws]), "refused": false},
	# On a clean session: this is not the quarantine.
	"session not tainted": {"input": object.union(call("slack", "post_message", [aws]), {"session": {"tainted": false}}), "refused": true},
	# Malformed detector output refuses.
	"secrets not a list": {"input": call("slack", "post_message", "AKIAIOSFODNN7EXAMPLE"), "refused": true},
	"a hit that is not an object": {"input": call("slack", "post_message", ["x"]), "refused": true},
	"a hit without path": {"input": call("slack", "post_message", [object.remove(aws, {"path"})]), "refused": true},
	# Other frames.
	"response phase": {"input": object.union(call("slack", "post_message", [aws]), {"phase": "response"}), "refused": false},
	"resources/read request": {"input": object.union(call("slack", "post_message", [aws]), {"method": "resources/read"}), "refused": false},
}

test_secrets_outbound[name] if {
	some name, tc in cases
	dec := lib.decide(tc.input, {"servers": servers})
	got := rule in lib.violated(dec)
	got == tc.refused
	dec.allow != tc.refused
}

# One violation per argument, whatever the number of secrets in it.
test_one_violation_per_argument if {
	hits := [aws, gh, object.union(aws, {"path": "/attachments/0/body"})]
	dec := lib.decide(call("slack", "post_message", hits), {"servers": servers})
	count(dec.violations) == 2
}

test_message[name] if {
	some name, tc in {
		"one secret": {
			"hits": [aws],
			"says": [
				`argument "text" carries a secret (kinds "aws_access_key"; redacted "AKIA…MPLE")`,
				"slack/post_message sends data out (servers.slack.outbound lists it)",
				"waiver for secrets.outbound",
			],
		},
		"two in one argument, sorted": {
			"hits": [gh, aws],
			"says": [`(kinds "aws_access_key", "github_token"; redacted "AKIA…MPLE", "ghp_…x9Qz")`],
		},
		"decoded": {
			"hits": [object.union(aws, {"decoded": "base64"})],
			"says": [`redacted "AKIA…MPLE"; decoded from base64)`],
		},
		"nested argument": {
			"hits": [object.union(aws, {"path": "/blocks/0/text"})],
			"says": [`argument "blocks.0.text" carries`],
		},
		"many kinds": {
			"hits": [{"kind": sprintf("k%d", [i]), "path": "/text", "redacted": "r"} | some i in numbers.range(1, 7)],
			"says": [`"k5" and 2 more`],
		},
		"malformed hit": {
			"hits": [{"kind": 7}],
			"says": [`argument "?" carries a secret (kinds "?"; redacted "?")`],
		},
		"output not a list": {
			"hits": "x",
			"says": ["the secret detector's output is not a list", "slack/post_message"],
		},
	}
	dec := lib.decide(call("slack", "post_message", tc.hits), {"servers": servers})
	[v] := dec.violations
	v.rule == rule
	v.mode == "enforce"
	every s in tc.says {
		contains(v.message, s)
	}
}

# Whatever the hits carry, the message quotes only kinds and redacted forms.
test_message_never_quotes_the_secret if {
	secret := "AKIAIOSFODNN7EXAMPLE"
	hits := [object.union(aws, {"raw": secret, "match": secret}), secret]
	inp := object.union(call("slack", "post_message", hits), {"arguments": {"text": secret}})
	dec := lib.decide(inp, {"servers": servers})
	count(dec.violations) == 2
	every v in dec.violations {
		not contains(v.message, secret)
	}
}

# The violation names its argument: a waiver must cover that argument.
test_waivers[name] if {
	some name, tc in {
		"match on the argument": {"match": {"text": "*"}, "waived": true},
		"match on another argument": {"match": {"channel": "*"}, "waived": false},
		"other tool": {"match": {}, "tool": "send", "waived": false},
		"no match": {"match": {}, "waived": true},
	}
	waiver := {
		"id": "W-9", "rule": rule, "server": "slack", "tool": object.get(tc, "tool", "post_message"),
		"match": tc.match, "expires": "2027-01-31", "reason": "r", "approved_by": "a",
	}
	inp := object.union(call("slack", "post_message", [aws]), {"arguments": {"text": "k", "channel": "#ops"}})
	dec := lib.decide(inp, {"servers": servers, "waivers": [waiver]})
	dec.allow == tc.waived
}

test_audit_mode if {
	dec := lib.decide(call("slack", "post_message", [aws]), {"servers": servers, "mode": "audit"})
	dec.allow
	[v] := dec.violations
	v.mode == "audit"
}

# With a tainted session, the quarantine refuses as well: two rules.
test_with_quarantine if {
	inp := object.union(call("slack", "post_message", [aws]), {"session": {"id": "s", "tainted": true, "taint": []}})
	dec := lib.decide(inp, {"servers": servers})
	lib.violated(dec) == {rule, "quarantine.outbound_after_taint"}
}
