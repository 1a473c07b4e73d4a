package airlock_test.rules.quarantine

import data.airlock_test.lib

servers := {
	"web": {"untrusted": ["*"]},
	"slack": {"untrusted": ["read_channel"], "outbound": ["post_message"]},
	"mail": {"outbound": "*"},
	"fs": {"outbound": ["*"], "untrusted": "*"},
	"odd": {"outbound": 7, "untrusted": {"x": 1}},
}

taint_record := {"server": "web", "tool": "fetch", "at": "2026-11-29T11:59:00Z", "decision_id": "d-42"}

tainted := {"session": {"id": "s-9", "tainted": true, "taint": [taint_record]}}

call(server, tool, over) := lib.request(object.union({"server": server, "tool": {"name": tool}}, over))

outbound_cases := {
	"tainted, listed tool": {"input": call("slack", "post_message", tainted), "refused": true},
	"tainted, tool not outbound": {"input": call("slack", "read_channel", tainted), "refused": false},
	"not tainted": {"input": call("slack", "post_message", {}), "refused": false},
	"tainted, outbound is the string *": {"input": call("mail", "send", tainted), "refused": true},
	"tainted, outbound lists *": {"input": call("fs", "write_file", tainted), "refused": true},
	"tainted, server without outbound": {"input": call("web", "fetch", tainted), "refused": false},
	"tainted, unknown server": {"input": call("other", "post_message", tainted), "refused": false},
	"tainted, malformed outbound": {"input": call("odd", "post_message", tainted), "refused": false},
	"tainted flag not true": {"input": call("slack", "post_message", {"session": {"tainted": "yes"}}), "refused": false},
	"tainted, response phase": {"input": object.union(call("slack", "post_message", tainted), {"phase": "response"}), "refused": false},
	"tainted, other method": {"input": object.union(call("slack", "post_message", tainted), {"method": "resources/read"}), "refused": false},
}

test_outbound_after_taint[name] if {
	some name, tc in outbound_cases
	dec := lib.decide(tc.input, {"servers": servers})
	got := "quarantine.outbound_after_taint" in lib.violated(dec)
	got == tc.refused
	dec.allow != tc.refused
}

test_outbound_message_names_source_and_remedy if {
	dec := lib.decide(call("slack", "post_message", tainted), {"servers": servers})
	[v] := dec.violations
	v.rule == "quarantine.outbound_after_taint"
	contains(v.message, "web/fetch")
	contains(v.message, "2026-11-29T11:59:00Z")
	contains(v.message, "d-42")
	contains(v.message, "slack/post_message")
	contains(v.message, "airlock clear s-9")
}

test_outbound_message_without_taint_record[name] if {
	some name, session in {
		"empty list": {"id": "s-9", "tainted": true, "taint": []},
		"no list": {"tainted": true},
		"not an object": {"tainted": true, "taint": ["web"]},
	}
	inp := json.patch(call("slack", "post_message", {}), [{"op": "replace", "path": "/session", "value": session}])
	dec := lib.decide(inp, {"servers": servers})
	[v] := dec.violations
	contains(v.message, "untrusted content earlier")
	contains(v.message, "airlock clear")
}

test_outbound_message_partial_taint_record if {
	inp := call("slack", "post_message", {"session": {"tainted": true, "taint": [{"server": "web"}]}})
	dec := lib.decide(inp, {"servers": servers})
	[v] := dec.violations
	contains(v.message, "web/?")
}

untrusted_cases := {
	"untrusted * result": {"input": lib.response({}), "taint": true},
	"untrusted * error result": {"input": lib.response({"result": {"isError": true}}), "taint": true},
	"listed tool": {"input": lib.response({"server": "slack", "tool": {"name": "read_channel"}}), "taint": true},
	"listed tool, error result": {"input": lib.response({"server": "slack", "tool": {"name": "read_channel"}, "result": {"isError": true}}), "taint": true},
	"tool not listed": {"input": lib.response({"server": "slack", "tool": {"name": "post_message"}}), "taint": false},
	"untrusted is the string *": {"input": lib.response({"server": "fs", "tool": {"name": "read_file"}}), "taint": true},
	"malformed untrusted": {"input": lib.response({"server": "odd", "tool": {"name": "x"}}), "taint": false},
	"unknown server": {"input": lib.response({"server": "other"}), "taint": false},
	"request phase": {"input": lib.request({}), "taint": false},
	"tools/list response": {"input": lib.response({"method": "tools/list"}), "taint": false},
	"resources/read response": {"input": lib.response({"method": "resources/read"}), "taint": false},
}

test_untrusted_result[name] if {
	some name, tc in untrusted_cases
	dec := lib.decide(tc.input, {"servers": servers})
	dec.taint == tc.taint
	untrusted := "quarantine.untrusted_result" in lib.tainted(dec)
	untrusted == tc.taint
	dec.allow # a taint does not refuse the result
}

test_untrusted_error_result_message if {
	dec := lib.decide(lib.response({"result": {"isError": true}}), {"servers": servers})
	[t] := dec.taints
	t == {"rule": "quarantine.untrusted_result", "message": t.message}
	contains(t.message, "error result of web/fetch")
}

# Taints ignore modes and waivers.
test_taint_ignores_audit_and_waivers if {
	waiver := {
		"id": "W-1", "rule": "quarantine.untrusted_result", "expires": "2030-01-01",
		"reason": "r", "approved_by": "a",
	}
	d := {"servers": servers, "mode": "audit", "waivers": [waiver]}
	dec := lib.decide(lib.response({}), d)
	dec.taint
	dec.waived == []
}
