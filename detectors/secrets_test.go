package detectors

import (
	"encoding/base64"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Test secrets are made at run time from a seeded generator, so that no
// literal in this file looks like a live credential to a secret scanner.
const (
	secAlphaB62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	secAlphaB64 = secAlphaB62 + "+/"
	secAlphaHex = "0123456789abcdef"
	secAlphaB36 = "abcdefghijklmnopqrstuvwxyz0123456789"
	secAlphaUpD = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
)

func secFake(alphabet string, n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5ec7e75))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func secFakeBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0xb17e5))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func secB64URL(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func secLast(s string, n int) string { return s[len(s)-n:] }

// secFakeJWT is header.payload.signature with a random 32-byte signature.
func secFakeJWT(header, payload string, seed uint64) string {
	return secB64URL(header) + "." + secB64URL(payload) + "." + base64.RawURLEncoding.EncodeToString(secFakeBytes(32, seed))
}

// secPEMBody is a base64 body in 64-character lines.
func secPEMBody(n int, seed uint64) string {
	b := base64.StdEncoding.EncodeToString(secFakeBytes(n, seed))
	var out strings.Builder
	for len(b) > 64 {
		out.WriteString(b[:64] + "\n")
		b = b[64:]
	}
	out.WriteString(b + "\n")
	return out.String()
}

type secWant struct {
	kind, text, redacted string
}

func secCheck(t *testing.T, field, s string, want []secWant) {
	t.Helper()
	got := FindSecrets(field, s)
	var gotW []secWant
	for _, m := range got {
		gotW = append(gotW, secWant{m.Kind, s[m.Start:m.End], m.Redacted})
	}
	assert.Equal(t, want, gotW)
	secCheckInvariants(t, s, got)
}

var (
	sxAKIA    = "AKIA" + secFake(secAlphaUpD, 16, 1)
	sxASIA    = "ASIA" + secFake(secAlphaUpD, 16, 2)
	sxAWSSec  = secFake(secAlphaB64, 40, 3)
	sxGHP     = "ghp_" + secFake(secAlphaB62, 36, 4)
	sxGHO     = "gho_" + secFake(secAlphaB62, 36, 5)
	sxGHU     = "ghu_" + secFake(secAlphaB62, 36, 6)
	sxGHS     = "ghs_" + secFake(secAlphaB62, 36, 7)
	sxGHR     = "ghr_" + secFake(secAlphaB62, 36, 8)
	sxGHPAT   = "github_pat_" + secFake(secAlphaB62, 22, 9) + "_" + secFake(secAlphaB62, 59, 10)
	sxGLPAT   = "glpat-" + secFake(secAlphaB62+"-_", 20, 11)
	sxXOXB    = "xoxb-" + secFake("0123456789", 12, 12) + "-" + secFake("0123456789", 13, 13) + "-" + secFake(secAlphaB62, 24, 14)
	sxXOXP    = "xoxp-" + secFake("0123456789", 12, 15) + "-" + secFake("0123456789", 12, 16) + "-" + secFake("0123456789", 13, 17) + "-" + secFake(secAlphaHex, 32, 18)
	sxXAPP    = "xapp-1-A" + secFake(secAlphaUpD, 10, 19) + "-" + secFake("0123456789", 13, 20) + "-" + secFake(secAlphaHex, 64, 21)
	sxHook    = "https://hooks.slack.com/services/T" + secFake(secAlphaUpD, 8, 22) + "/B" + secFake(secAlphaUpD, 10, 23) + "/" + secFake(secAlphaB62, 24, 24)
	sxStripe  = "sk_live_" + secFake(secAlphaB62, 24, 25)
	sxStripeR = "rk_live_" + secFake(secAlphaB62, 99, 26)
	sxGoogle  = "AIza" + secFake(secAlphaB62+"-_", 35, 27)
	sxOpenAI  = "sk-proj-" + secFake(secAlphaB62+"-_", 120, 28)
	sxOpenAIL = "sk-" + secFake(secAlphaB62, 20, 29) + "T3BlbkFJ" + secFake(secAlphaB62, 20, 30)
	sxAnthr   = "sk-ant-api03-" + secFake(secAlphaB62+"-_", 93, 31) + "AA"
	sxNPM     = "npm_" + secFake(secAlphaB62, 36, 32)
	sxJWT     = secFakeJWT(`{"alg":"HS256","typ":"JWT"}`, `{"sub":"1234567890","name":"Jane","iat":1767225600}`, 33)
	sxJWTNone = secB64URL(`{"alg":"none"}`) + "." + secB64URL(`{"sub":"42"}`) + "."
	sxRandom  = secFake(secAlphaB62, 32, 34)
	sxHex     = secFake(secAlphaHex, 40, 35)
)

func TestFindSecretsShapedTokens(t *testing.T) {
	rsa := "-----BEGIN RSA PRIVATE KEY-----\n" + secPEMBody(600, 40) + "-----END RSA PRIVATE KEY-----"
	ossh := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secPEMBody(400, 41) + "-----END OPENSSH PRIVATE KEY-----"
	ec := "-----BEGIN EC PRIVATE KEY-----\n" + secPEMBody(120, 42) + "-----END EC PRIVATE KEY-----"
	pkcs8 := "-----BEGIN PRIVATE KEY-----\n" + secPEMBody(300, 43) + "-----END PRIVATE KEY-----"
	enc := "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n" + secPEMBody(600, 44) + "-----END RSA PRIVATE KEY-----"
	encP8 := "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + secPEMBody(300, 45) + "-----END ENCRYPTED PRIVATE KEY-----"
	pgp := "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + secPEMBody(500, 46) + "-----END PGP PRIVATE KEY BLOCK-----"
	dsa := "-----BEGIN DSA PRIVATE KEY-----\n" + secPEMBody(300, 47) + "-----END DSA PRIVATE KEY-----"
	escaped := strings.ReplaceAll(rsa, "\n", `\n`)
	noFooter := "-----BEGIN PRIVATE KEY-----\n" + secPEMBody(200, 48)
	noFooter = strings.TrimSuffix(noFooter, "\n")

	hdr := func(h string) string { return h + "…" }
	tests := []struct {
		name string
		s    string
		want []secWant
	}{
		{"aws access key id", "key id " + sxAKIA + " in config",
			[]secWant{{SecretKindAWSAccessKey, sxAKIA, "AKIA…" + secLast(sxAKIA, 3)}}},
		{"aws temporary key id", "id=" + sxASIA,
			[]secWant{{SecretKindAWSAccessKey, sxASIA, "ASIA…" + secLast(sxASIA, 3)}}},
		{"aws credentials csv pairs the secret with the id",
			"User name,Password,Access key ID,Secret access key\ndeploy,," + sxAKIA + "," + sxAWSSec + "\n",
			[]secWant{{SecretKindAWSAccessKey, sxAKIA, "AKIA…" + secLast(sxAKIA, 3)}, {SecretKindAWSSecretKey, sxAWSSec, "…" + secLast(sxAWSSec, 4)}}},
		{"aws secret by its env name", "export AWS_SECRET_ACCESS_KEY=" + sxAWSSec,
			[]secWant{{SecretKindAWSSecretKey, sxAWSSec, "…" + secLast(sxAWSSec, 4)}}},
		{"aws secret in ini", "[default]\naws_secret_access_key = " + sxAWSSec + "\n",
			[]secWant{{SecretKindAWSSecretKey, sxAWSSec, "…" + secLast(sxAWSSec, 4)}}},
		{"github classic", "token " + sxGHP + " here", []secWant{{SecretKindGitHubToken, sxGHP, "ghp_…" + secLast(sxGHP, 4)}}},
		{"github oauth", sxGHO, []secWant{{SecretKindGitHubToken, sxGHO, "gho_…" + secLast(sxGHO, 4)}}},
		{"github user-to-server", "(" + sxGHU + ")", []secWant{{SecretKindGitHubToken, sxGHU, "ghu_…" + secLast(sxGHU, 4)}}},
		{"github server-to-server", "'" + sxGHS + "'", []secWant{{SecretKindGitHubToken, sxGHS, "ghs_…" + secLast(sxGHS, 4)}}},
		{"github refresh", "x:" + sxGHR, []secWant{{SecretKindGitHubToken, sxGHR, "ghr_…" + secLast(sxGHR, 4)}}},
		{"github fine-grained", "GH_TOKEN=" + sxGHPAT, []secWant{{SecretKindGitHubToken, sxGHPAT, "github_pat_…" + secLast(sxGHPAT, 4)}}},
		{"github token in a clone url", "git clone https://" + sxGHP + "@github.com/acme/x.git",
			[]secWant{{SecretKindGitHubToken, sxGHP, "ghp_…" + secLast(sxGHP, 4)}}},
		{"gitlab", "PRIVATE-TOKEN: " + sxGLPAT, []secWant{{SecretKindGitLabToken, sxGLPAT, "glpat-…" + secLast(sxGLPAT, 3)}}},
		{"slack bot", "SLACK_BOT_TOKEN=" + sxXOXB, []secWant{{SecretKindSlackToken, sxXOXB, "xoxb-…" + secLast(sxXOXB, 4)}}},
		{"slack user", sxXOXP, []secWant{{SecretKindSlackToken, sxXOXP, "xoxp-…" + secLast(sxXOXP, 4)}}},
		{"slack app-level", sxXAPP, []secWant{{SecretKindSlackToken, sxXAPP, "xapp-…" + secLast(sxXAPP, 4)}}},
		{"slack webhook", "curl -X POST -d @msg.json " + sxHook,
			[]secWant{{SecretKindSlackWebhook, sxHook, "https://hooks.slack.com/services/…" + secLast(sxHook, 4)}}},
		{"stripe secret", "Stripe.api_key = '" + sxStripe + "'", []secWant{{SecretKindStripeKey, sxStripe, "sk_live_…" + secLast(sxStripe, 4)}}},
		{"stripe restricted", sxStripeR, []secWant{{SecretKindStripeKey, sxStripeR, "rk_live_…" + secLast(sxStripeR, 4)}}},
		{"google api key", "https://maps.googleapis.com/maps/api/js?key=" + sxGoogle + "&callback=init",
			[]secWant{{SecretKindGoogleAPIKey, sxGoogle, "AIza…" + secLast(sxGoogle, 4)}}},
		{"openai project key", "OPENAI_API_KEY=" + sxOpenAI, []secWant{{SecretKindOpenAIKey, sxOpenAI, "sk-proj-…" + secLast(sxOpenAI, 4)}}},
		{"openai legacy key", "openai.api_key = \"" + sxOpenAIL + "\"", []secWant{{SecretKindOpenAIKey, sxOpenAIL, "sk-…" + secLast(sxOpenAIL, 4)}}},
		{"anthropic key", "x-api-key: " + sxAnthr, []secWant{{SecretKindAnthropicKey, sxAnthr, "sk-ant-…" + secLast(sxAnthr, 4)}}},
		{"npm token", "//registry.npmjs.org/:_authToken=" + sxNPM, []secWant{{SecretKindNPMToken, sxNPM, "npm_…" + secLast(sxNPM, 4)}}},
		{"jwt bearer", "Authorization: Bearer " + sxJWT, []secWant{{SecretKindJWT, sxJWT, "eyJ…" + secLast(sxJWT, 4)}}},
		{"jwt in a url", "https://app.example/cb?id_token=" + sxJWT + "&state=1", []secWant{{SecretKindJWT, sxJWT, "eyJ…" + secLast(sxJWT, 4)}}},
		{"unsecured jwt", "token: " + sxJWTNone, []secWant{{SecretKindJWT, sxJWTNone, "eyJ…"}}},
		{"rsa private key", "key:\n" + rsa + "\n", []secWant{{SecretKindPrivateKey, rsa, hdr("-----BEGIN RSA PRIVATE KEY-----")}}},
		{"openssh private key", ossh, []secWant{{SecretKindPrivateKey, ossh, hdr("-----BEGIN OPENSSH PRIVATE KEY-----")}}},
		{"ec private key", ec, []secWant{{SecretKindPrivateKey, ec, hdr("-----BEGIN EC PRIVATE KEY-----")}}},
		{"dsa private key", dsa, []secWant{{SecretKindPrivateKey, dsa, hdr("-----BEGIN DSA PRIVATE KEY-----")}}},
		{"pkcs8 private key", pkcs8, []secWant{{SecretKindPrivateKey, pkcs8, hdr("-----BEGIN PRIVATE KEY-----")}}},
		{"encrypted pem with headers", enc, []secWant{{SecretKindPrivateKey, enc, hdr("-----BEGIN RSA PRIVATE KEY-----")}}},
		{"encrypted pkcs8", encP8, []secWant{{SecretKindPrivateKey, encP8, hdr("-----BEGIN ENCRYPTED PRIVATE KEY-----")}}},
		{"pgp private key block", pgp, []secWant{{SecretKindPrivateKey, pgp, hdr("-----BEGIN PGP PRIVATE KEY BLOCK-----")}}},
		{"private key with escaped newlines", `{"key":"` + escaped + `"}`, []secWant{{SecretKindPrivateKey, escaped, hdr("-----BEGIN RSA PRIVATE KEY-----")}}},
		{"private key without footer", noFooter, []secWant{{SecretKindPrivateKey, noFooter, hdr("-----BEGIN PRIVATE KEY-----")}}},
		{"several, in order", sxNPM + " " + sxGHP + "\n" + sxAKIA,
			[]secWant{{SecretKindNPMToken, sxNPM, "npm_…" + secLast(sxNPM, 4)}, {SecretKindGitHubToken, sxGHP, "ghp_…" + secLast(sxGHP, 4)}, {SecretKindAWSAccessKey, sxAKIA, "AKIA…" + secLast(sxAKIA, 3)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secCheck(t, "", tc.s, tc.want)
		})
	}
}

func TestFindSecretsNamedValues(t *testing.T) {
	pw := "Tr0ub4dor&3x"
	tests := []struct {
		name, field, s string
		want           []secWant
	}{
		{"api_key field", "api_key", sxRandom, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"camelCase field", "clientSecret", sxRandom, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"header field", "X-Api-Key", sxRandom, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"hex secret", "webhook_secret", sxHex, []secWant{{SecretKindHighEntropy, sxHex, "…" + secLast(sxHex, 4)}}},
		{"authorization scheme stripped", "Authorization", "Bearer " + sxRandom, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"basic credentials", "authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("deploy:"+pw+pw)),
			[]secWant{{SecretKindHighEntropy, base64.StdEncoding.EncodeToString([]byte("deploy:" + pw + pw)), "…" + secLast(base64.StdEncoding.EncodeToString([]byte("deploy:"+pw+pw)), 4)}}},
		{"session id", "session_id", sxRandom, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"cookie pairs", "Cookie", "theme=dark; sid=" + sxRandom + "; lang=en",
			[]secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"short password is fully masked", "password", "hunter2", []secWant{{SecretKindPassword, "hunter2", SecretMask}}},
		{"password field, quoted", "db_password", `"` + pw + `"`, []secWant{{SecretKindPassword, pw, "…" + secLast(pw, 3)}}},
		{"token field with a shaped token: the shape wins", "token", sxGHP, []secWant{{SecretKindGitHubToken, sxGHP, "ghp_…" + secLast(sxGHP, 4)}}},
		{"aws secret field", "secretAccessKey", sxAWSSec, []secWant{{SecretKindAWSSecretKey, sxAWSSec, "…" + secLast(sxAWSSec, 4)}}},
		{"dotenv contents", "content", "DB_HOST=localhost\nDB_PASSWORD=" + pw + "\nSTRIPE_WEBHOOK_SECRET=" + sxRandom + "\nDEBUG=false\n",
			[]secWant{{SecretKindPassword, pw, "…" + secLast(pw, 3)}, {SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"json text", "", `{"user":"bob","password":"` + pw + `","remember":true}`, []secWant{{SecretKindPassword, pw, "…" + secLast(pw, 3)}}},
		{"json inside a string", "", `{\"client_secret\":\"` + sxRandom + `\"}`, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"yaml", "", "auth:\n  token: " + sxRandom + "\n", []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"query string", "", "https://api.example/v1/items?access_token=" + sxRandom + "&page=2", []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"curl header", "", `curl -H "Authorization: Bearer ` + sxRandom + `" https://api.example/v1`, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"go assignment", "", `apiKey := "` + sxRandom + `"`, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"python kwarg", "", `Client(api_key='` + sxRandom + `', timeout=30)`, []secWant{{SecretKindHighEntropy, sxRandom, "…" + secLast(sxRandom, 4)}}},
		{"command line flag", "", "mysql -u root --password=" + pw + " app", []secWant{{SecretKindPassword, pw, "…" + secLast(pw, 3)}}},
		{"inline shaped token is not counted twice", "", "GITHUB_TOKEN=" + sxGHP, []secWant{{SecretKindGitHubToken, sxGHP, "ghp_…" + secLast(sxGHP, 4)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secCheck(t, tc.field, tc.s, tc.want)
		})
	}
}

// TestFindSecretsBenign: none of these is a secret.
func TestFindSecretsBenign(t *testing.T) {
	uuid := "123e4567-e89b-12d3-a456-426614174000"
	sha256 := secFake(secAlphaHex, 64, 50)
	sha1 := secFake(secAlphaHex, 40, 51)
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), secFakeBytes(6000, 52)...))
	cursor := base64.StdEncoding.EncodeToString(secFakeBytes(48, 53))
	tests := []struct{ field, s string }{
		// identifiers and digests
		{"id", uuid}, {"session_id", uuid}, {"request_id", uuid}, {"", "trace " + uuid + " done"},
		{"token", "{" + strings.ToUpper(uuid) + "}"},
		{"sha256", sha256}, {"", "sha256:" + sha256}, {"digest", "sha256:" + sha256}, {"checksum", sha256},
		{"commit", sha1}, {"", "commit " + sha1 + "\nMerge: 6fb3c1e 1d2e3f4"}, {"sha", sha1[:7]},
		{"integrity", "sha512-" + base64.StdEncoding.EncodeToString(secFakeBytes(64, 54))},
		{"", "https://github.com/acme/tool/commit/" + sha1},
		{"etag", `W/"` + sha1 + `"`},
		// high-entropy values in fields that are not secret-ish
		{"data", sxRandom}, {"nonce_count", "00000001"}, {"blob", cursor}, {"image", png}, {"", png},
		{"", "![chart](" + png + ")"}, {"avatar", png},
		// pagination and CSRF
		{"next_page_token", cursor}, {"pageToken", cursor}, {"cursor", cursor}, {"csrf_token", sxRandom},
		{"", `"nextPageToken": "` + cursor + `"`},
		// secret-ish names whose values are not secrets
		{"author", "Jane Doe <jane@example.com>"}, {"token_type", "Bearer"}, {"tokenizer", "cl100k_base"},
		{"token_url", "https://oauth2.googleapis.com/token"}, {"secret_name", "db-credentials"},
		{"password_policy", "min-length-12-with-symbols"}, {"password_hash", "$2b$12$" + secFake(secAlphaB62+"./", 53, 55)},
		{"auth_method", "oauth"}, {"session", "morning-standup"}, {"secretKeyRef", "db-credentials"},
		{"password", "required"}, {"password", "string"}, {"token", "getUserSessionToken"},
		{"api_key", "REPLACE_WITH_YOUR_TOKEN"}, {"secret", "correct-horse-battery-staple"},
		{"token_file", "/var/run/secrets/kubernetes.io/serviceaccount/token"}, {"password_file", "~/.config/app/password"},
		{"api_key", "api-key-for-production-us-east"}, {"auth", "none"}, {"auth", "true"},
		{"credentials", "service-account@project.iam.gserviceaccount.com"},
		// placeholders
		{"password", "changeme"}, {"token", "xxxxxxxx"}, {"token", "<token>"}, {"api_key", "${API_KEY}"},
		{"api_key", "your-api-key-here"}, {"password", "********"}, {"secret", "{{ secrets.APP_SECRET }}"},
		{"token", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}, {"api_key", "sk-..."}, {"password", "P@ssw0rd-example"},
		{"password", "test1234"}, {"secret", "%APP_SECRET%"}, {"token", "$(cat /run/secrets/token)"},
		{"token", "process.env.GITHUB_TOKEN"}, {"api_key", "0123456789abcdef0123456789abcdef"},
		{"", "API_KEY=your-api-key-here"}, {"", "Authorization: Bearer <token>"}, {"", "Authorization: Bearer $TOKEN"},
		{"", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}, {"", "AKIAIOSFODNN7EXAMPLE"},
		{"", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, {"", "export OPENAI_API_KEY=sk-your-key-here"},
		{"", "sk-" + strings.Repeat("x", 48)}, {"", "npm_" + strings.Repeat("0", 36)}, {"", "xoxb-your-token"},
		{"", "ghp_1234567890abcdefghijklmnopqrstuvwxyz"},
		// prose and code
		{"", "The password must be at least 12 characters long; the token expires after 30 days."},
		{"", "Secret: the recipe is simple. Token: see above. Password: ask the admin."},
		{"", "const apiKey = process.env.OPENAI_API_KEY;\nlet token = await getToken(session);"},
		{"", "password = os.environ[\"DB_PASSWORD\"]\nif password == \"\": raise SystemExit(1)"},
		{"", "if (password != confirmPassword) { errors.password = \"mismatch\"; }"},
		{"", "token := r.Header.Get(\"Authorization\")\nsecret := cfg.Secret"},
		{"", "secret_key_base = Rails.application.credentials.secret_key_base"},
		{"", "max_tokens=1024, prompt_tokens: 512, \"total_tokens\": 1536"},
		{"", "task-force-alpha-bravo-charlie-delta-echo and sk-learn and my-disk-cleanup"},
		{"", "Tokens start with ghp_ (classic) or github_pat_ (fine-grained); keys with AKIA or AIza."},
		{"", "eyJ is how base64 of a JSON object starts; eyJhbGciOiJIUzI1NiJ9 alone is just a header."},
		{"", "npm_config_cache=/tmp/npm and NODE_OPTIONS=--max-old-space-size=4096"},
		{"", "version v1.2.3-rc.1+build.5 released 2026-03-02T10:14:07.123Z"},
		{"", "-----BEGIN CERTIFICATE-----\n" + secPEMBody(300, 56) + "-----END CERTIFICATE-----"},
		{"", "-----BEGIN PUBLIC KEY-----\n" + secPEMBody(200, 57) + "-----END PUBLIC KEY-----"},
		{"", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA...\n-----END OPENSSH PRIVATE KEY-----"},
		{"", "a 40-character base64 string with no name nearby: " + sxAWSSec},
		{"", "Go to https://hooks.slack.com/services/ and create a webhook; it looks like https://hooks.slack.com/services/T000/B000/XXXX."},
		// code that assigns secret-ish names
		{"", "Session: SessionState{ID: \"s1\"},\nsession: &hookSession{MemorySession: m},"},
		{"", "creds: selectedJWTCallCreds,\ntoken: tokenRes.IDToken,\nAccessKeyID: payload.Result.Credentials.AccessKeyID,"},
		{"", "opts.PerRPCCredentials = newCreds.opts.PerRPCCreds\nPassword: cfg.Password,\npassword = self._password"},
		{"", "password := headers[\"x-password\"]\nPASS = C.ICMPV6_FILTER_PASS\nsecret: !vault |\n  $ANSIBLE_VAULT;1.1;AES256"},
		{"token", "v1.AuthenticationToken"}, {"secret_name", "SecretName-6RandomCharacters"}, {"client_secret", "oauth2-secret-token"},
		{"client_secret", "mcp-client-secret"}, {"credentials", "gcp-service-account"},
		{"", "with:\n  password: OSSRH_PASSWORD\n  gpg-passphrase: MAVEN_GPG_PASSPHRASE"},
	}
	for _, tc := range tests {
		assert.Empty(t, FindSecrets(tc.field, tc.s), "field %q: %q", tc.field, tc.s)
	}
	dirs := []string{"../testdata/detectors/secrets/benign", "../testdata/detectors/injection/benign"}
	files := 0
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			files++
			assert.Empty(t, FindSecrets("", string(b)), e.Name())
			for i, line := range strings.Split(string(b), "\n") {
				assert.Empty(t, FindSecrets("", line), "%s:%d", e.Name(), i+1)
			}
		}
	}
	assert.GreaterOrEqual(t, files, 10)
	assert.Empty(t, FindSecrets("", injBenignProse(64<<10)))
}

// TestSecretEntropyThreshold backs the numbers in secEntropyThreshold:
// random strings of every common alphabet and of 16 to 64 bytes, named
// api_key, are found at least 97% of the time (the misses are strings that
// happen to be all letters in a word-like shape, or to hold a run).
func TestSecretEntropyThreshold(t *testing.T) {
	for _, alpha := range []struct{ name, chars string }{{"base62", secAlphaB62}, {"base64", secAlphaB64}, {"hex", secAlphaHex}, {"base36", secAlphaB36}} {
		for _, n := range []int{16, 20, 24, 32, 40, 64} {
			found := 0
			const draws = 500
			for i := range draws {
				v := secFake(alpha.chars, n, uint64(1000*n+i))
				if len(FindSecrets("api_key", v)) == 1 {
					found++
				}
			}
			rate := float64(found) / draws
			t.Logf("%s n=%d: %.3f", alpha.name, n, rate)
			assert.GreaterOrEqual(t, rate, 0.97, "%s n=%d: %.3f", alpha.name, n, rate)
		}
	}
}

func TestFindSecretsCaps(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		b.WriteString("npm_" + secFake(secAlphaB62, 36, uint64(i)) + "\n")
	}
	got := FindSecrets("", b.String())
	assert.Len(t, got, secMaxMatches)
	secCheckInvariants(t, b.String(), got)
}

// secCheckInvariants: valid, ordered, disjoint byte ranges; known
// kinds; Redacted shows at most a public kind prefix and 4 more bytes of
// the secret.
func secCheckInvariants(t testing.TB, s string, ms []SecretMatch) {
	t.Helper()
	kinds := map[string]bool{
		SecretKindAWSAccessKey: true, SecretKindAWSSecretKey: true, SecretKindGitHubToken: true, SecretKindGitLabToken: true,
		SecretKindSlackToken: true, SecretKindSlackWebhook: true, SecretKindStripeKey: true, SecretKindGoogleAPIKey: true,
		SecretKindOpenAIKey: true, SecretKindAnthropicKey: true, SecretKindNPMToken: true, SecretKindPrivateKey: true,
		SecretKindJWT: true, SecretKindPassword: true, SecretKindHighEntropy: true,
	}
	if len(ms) > secMaxMatches {
		t.Fatalf("%d matches", len(ms))
	}
	prevEnd := 0
	for _, m := range ms {
		if m.Start < 0 || m.End > len(s) || m.Start >= m.End {
			t.Fatalf("bad range %d:%d of %d", m.Start, m.End, len(s))
		}
		if m.Start < prevEnd {
			t.Fatalf("unordered or overlapping at %d", m.Start)
		}
		prevEnd = m.End
		if !kinds[m.Kind] {
			t.Fatalf("unknown kind %q", m.Kind)
		}
		span := s[m.Start:m.End]
		if m.Redacted == SecretMask {
			continue
		}
		prefix, tail, ok := strings.Cut(m.Redacted, "…")
		if !ok {
			t.Fatalf("redacted %q has no ellipsis", m.Redacted)
		}
		if prefix != "" {
			listed := false
			for _, p := range secPublicPrefixes {
				listed = listed || p == prefix
			}
			if !listed || !strings.HasPrefix(span, prefix) {
				t.Fatalf("redacted %q: prefix %q is not a listed public prefix of the span", m.Redacted, prefix)
			}
		}
		if len(tail) > 4 || !strings.HasSuffix(span, tail) || !utf8.ValidString(tail) {
			t.Fatalf("redacted %q: tail %q is not at most 4 bytes ending the span", m.Redacted, tail)
		}
		// At most 8 bytes of the secret: the tail, and no more than 8 of
		// the secret's bytes may line up anywhere in Redacted outside the
		// public prefix.
		if n := secLCS(tail, span[len(prefix):]); n > 8 {
			t.Fatalf("redacted %q shows %d bytes of the secret", m.Redacted, n)
		}
	}
}

func secLCS(a, b string) int {
	best := 0
	for i := range a {
		for j := i + best + 1; j <= len(a); j++ {
			if !strings.Contains(b, a[i:j]) {
				break
			}
			best = j - i
		}
	}
	return best
}

func FuzzFindSecrets(f *testing.F) {
	seeds := [][2]string{
		{"", "export AWS_ACCESS_KEY_ID=" + sxAKIA + "\nexport AWS_SECRET_ACCESS_KEY=" + sxAWSSec},
		{"", "token " + sxGHP + " " + sxGHPAT + " " + sxGLPAT},
		{"", sxXOXB + " " + sxHook + " " + sxStripe + " " + sxGoogle},
		{"", sxOpenAI + " " + sxOpenAIL + " " + sxAnthr + " " + sxNPM},
		{"", "Authorization: Bearer " + sxJWT},
		{"", "-----BEGIN RSA PRIVATE KEY-----\n" + secPEMBody(100, 60) + "-----END RSA PRIVATE KEY-----"},
		{"api_key", sxRandom}, {"password", "hunter2"}, {"cookie", "a=b; sid=" + sxRandom},
		{"", `{"password":"S3cr3t!pass","token":"` + sxRandom + `"}`},
		{"", "sk-ant-" + strings.Repeat("-", 40)}, {"", "eyJ.eyJ."}, {"", "-----BEGIN -----BEGIN RSA PRIVATE KEY-----"},
		{"", "AKIA" + strings.Repeat("A", 30)}, {"", strings.Repeat("=:", 50)}, {"token", "Bearer"},
		{"", "\\\"password\\\":\\\"" + sxRandom}, {"x", "\xff\xfe" + sxGHP + "\x00"},
	}
	for _, sd := range seeds {
		f.Add(sd[0], sd[1])
	}
	f.Fuzz(func(t *testing.T, field, s string) {
		secCheckInvariants(t, s, FindSecrets(field, s))
	})
}

func BenchmarkFindSecrets(b *testing.B) {
	typical := secTypicalText()
	prose := injBenignProse(1 << 20)
	if n := len(FindSecrets("", typical)); n != 2 {
		b.Fatalf("typical: %d matches, want 2", n)
	}
	if n := len(FindSecrets("", prose)); n != 0 {
		b.Fatalf("prose: %d matches, want 0", n)
	}
	for _, bc := range []struct{ name, s string }{{"typical_1KiB", typical}, {"prose_1MiB", prose}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				FindSecrets("content", bc.s)
			}
		})
	}
}

// secTypicalText is 1 KiB of a config file as a tool argument: names,
// URLs, a digest, and two secrets.
func secTypicalText() string {
	s := `# deploy.env — generated 2026-03-02
APP_NAME=billing-api
APP_ENV=production
LOG_LEVEL=info
DATABASE_URL=postgres://billing@db.internal:5432/billing?sslmode=require
REDIS_URL=redis://cache.internal:6379/0
IMAGE=ghcr.io/acme/billing-api@sha256:` + secFake(secAlphaHex, 64, 70) + `
REQUEST_TIMEOUT=30s
FEATURE_FLAGS=invoices,refunds,webhooks
GITHUB_TOKEN=` + sxGHP + `
SENTRY_ENVIRONMENT=production
ALLOWED_ORIGINS=https://app.example.com,https://admin.example.com
WEBHOOK_SIGNING_SECRET=` + sxRandom + `
MAX_UPLOAD_MB=25
`
	for len(s) < 1024 {
		s += "# padding: the values above are read once at startup\n"
	}
	return s[:1024]
}

// detRepeat repeats unit to n bytes.
func detRepeat(unit string, n int) string { return strings.Repeat(unit, n/len(unit)+1)[:n] }

// detCheckLinear fails if fn's time grows faster than linearly on unit
// repeated: it times 64 KiB and 256 KiB (the best of three runs each);
// linear work takes about 4 times as long on the larger, quadratic work 16
// times. A run under 100 ms is fast enough whatever its growth, and a
// failing measurement is repeated twice (the machine may be busy).
func detCheckLinear(t *testing.T, name, unit string, fn func(string)) {
	t.Helper()
	best := func(s string) time.Duration {
		b := time.Duration(math.MaxInt64)
		for range 3 {
			t0 := time.Now()
			fn(s)
			b = min(b, time.Since(t0))
		}
		return b
	}
	smallS, largeS := detRepeat(unit, 64<<10), detRepeat(unit, 256<<10)
	var small, large time.Duration
	for range 3 {
		small, large = best(smallS), best(largeS)
		if large <= 100*time.Millisecond || large <= 10*small {
			return
		}
	}
	t.Errorf("%s: 64 KiB in %v, 256 KiB in %v: not linear", name, small, large)
}

// TestFindSecretsLinearTime: inputs built to make each pass work hard.
func TestFindSecretsLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	for name, unit := range map[string]string{
		"pem without footer": "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("A", 64) + "\n",
		"jwt headers":        "eyJhbGciOiJIUzI1NiJ9.eyJ.", "long jwt header": "eyJ" + strings.Repeat("A", 2000) + ".xx ",
		"names": "password=", "long values": "password=" + strings.Repeat("x", 5000) + " ",
		"key ids": "+AKIA" + strings.Repeat("B", 16) + "+", "near key ids": "AKIAABCDEFGHIJKLMNOP " + strings.Repeat("aB3/", 10) + " ",
		"colons": "token:", "prefixes": "ghp_", "dashes": "-", "sk": "sk-" + strings.Repeat("aB3", 20) + " ",
		"webhooks": "https://hooks.slack.com/services/", "equals": "=", "quoted": `"secret":"`, "cookie pairs": "a=b; ",
	} {
		detCheckLinear(t, name, unit, func(s string) { FindSecrets("cookie", s) })
	}
}
