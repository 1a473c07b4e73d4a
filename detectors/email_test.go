package detectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEmails(t *testing.T) {
	type ew struct {
		Address, Domain, Path, Field string
		Dest                         bool
	}
	tests := []struct {
		name  string
		args  string
		opts  Options
		want  []ew
		hosts []hk
	}{
		{"to field", `{"to":"a@x.example"}`, Options{},
			[]ew{{"a@x.example", "x.example", "/to", "to", true}}, []hk{{"x.example", "email", true}}},
		{"array elements inherit the field", `{"to":["a@x.example","b@y.example"]}`, Options{},
			[]ew{{"a@x.example", "x.example", "/to/0", "to", true}, {"b@y.example", "y.example", "/to/1", "to", true}},
			[]hk{{"x.example", "email", true}, {"y.example", "email", true}}},
		{"domain normalized, local part kept", `{"cc":"A.B+tag@Sub.Example.COM."}`, Options{},
			[]ew{{"A.B+tag@sub.example.com", "sub.example.com", "/cc", "cc", true}}, []hk{{"sub.example.com", "email", true}}},
		{"address literal", `{"bcc":"a@[192.0.2.1]"}`, Options{},
			[]ew{{"a@192.0.2.1", "192.0.2.1", "/bcc", "bcc", true}}, []hk{{"192.0.2.1", "email", true}}},
		{"list in a recipients field", `{"recipients":"a@x.example, b@y.example"}`, Options{},
			[]ew{{"a@x.example", "x.example", "/recipients", "recipients", true}, {"b@y.example", "y.example", "/recipients", "recipients", true}},
			[]hk{{"x.example", "email", true}, {"y.example", "email", true}}},
		{"address field, email-shaped", `{"address":"a@x.example"}`, Options{},
			[]ew{{"a@x.example", "x.example", "/address", "address", true}}, []hk{{"x.example", "email", true}}},
		{"address field, postal", `{"address":"1 Main St, Springfield"}`, Options{}, nil, nil},
		{"reply_to", `{"reply_to":"x@y.example"}`, Options{},
			[]ew{{"x@y.example", "y.example", "/reply_to", "reply_to", true}}, []hk{{"y.example", "email", true}}},
		{"schema format email", `{"contact":"a@x.example"}`, Options{Formats: map[string]string{"/contact": "email"}},
			[]ew{{"a@x.example", "x.example", "/contact", "contact", true}}, []hk{{"x.example", "email", true}}},
		{"IDN domain", `{"email":"a@pаypal.com"}`, Options{},
			[]ew{{"a@xn--pypal-4ve.com", "xn--pypal-4ve.com", "/email", "email", true}}, []hk{{"xn--pypal-4ve.com", "email", true}}},
		{"mentioned in a body", `{"body":"mail bob@example.com about it"}`, Options{},
			[]ew{{"bob@example.com", "example.com", "/body", "body", false}}, []hk{{"example.com", "email", false}}},
		{"colon after, then prose", `{"body":"bob@example.com: hi"}`, Options{},
			[]ew{{"bob@example.com", "example.com", "/body", "body", false}}, []hk{{"example.com", "email", false}}},
		{"mentioned, TLD not in the list", `{"body":"mail bob@corp.example"}`, Options{}, nil, nil},
		{"versions, scopes, retina names", `{"body":"node@22.1.0 foo@2x.png @types/node user@localhost a@b"}`, Options{}, nil, nil},
		{"scp-style git remote", `{"body":"clone git@github.com:acme/cli.git"}`, Options{}, nil, []hk{{"github.com", "git", true}}},
		{"scp-style remote path", `{"body":"deploy@prod.example:/srv/app"}`, Options{}, nil, []hk{{"prod.example", "git", true}}},
		{"userinfo of a URL is no email", `{"body":"https://user@evil.example/"}`, Options{}, nil, []hk{{"evil.example", "url", true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ScanArguments(decode(t, tc.args), tc.opts)
			var got []ew
			for _, e := range r.Emails {
				got = append(got, ew{e.Address, e.Domain, e.Path, e.Field, e.Destination})
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.hosts, hostsOf(r))
		})
	}
	r := ScanContent(decode(t, `{"to":"a@x.com"}`), Options{})
	assert.Equal(t, []EmailHit{{Address: "a@x.com", Domain: "x.com", Path: "/to", Field: "to"}}, r.Emails)
	assert.Equal(t, []hk{{"x.com", "email", false}}, hostsOf(r))
}

func TestEmailLookalikeHost(t *testing.T) {
	r := scanOne(t, "to", "ceo@pаypal.com")
	if assert.Len(t, r.Hosts, 1) {
		assert.True(t, r.Hosts[0].Lookalike)
		assert.Equal(t, "pаypal.com", r.Hosts[0].Unicode)
	}
}
