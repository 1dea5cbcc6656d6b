package opt

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/invalid"
)

func textFields(t *testing.T, err error) []invalid.Field {
	t.Helper()
	var ie *invalid.Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %v is not an *invalid.Error", err)
	}
	return ie.Fields
}

// Bad text is refused wherever it is, named by its path, and nothing is
// decoded; good text, escaped or not, passes.
func TestDecodeRefusesBadText(t *testing.T) {
	const (
		nul  = invalid.TextNUL
		utf  = invalid.TextUTF8
		surr = invalid.TextSurrogate
	)
	for _, c := range []struct {
		name, body string
		want       []invalid.Field
	}{
		{"escaped NUL", `{"name":"a\u0000b"}`, []invalid.Field{{Name: "name", Message: nul}}},
		{"invalid byte", "{\"name\":\"a\xffb\"}", []invalid.Field{{Name: "name", Message: utf}}},
		{"overlong NUL", "{\"name\":\"\xc0\x80\"}", []invalid.Field{{Name: "name", Message: utf}}},
		{"overlong slash", "{\"name\":\"\xe0\x80\xaf\"}", []invalid.Field{{Name: "name", Message: utf}}},
		{"encoded surrogate", "{\"name\":\"\xed\xa0\x80\"}", []invalid.Field{{Name: "name", Message: utf}}},
		{"truncated sequence", "{\"name\":\"\xe2\x82\"}", []invalid.Field{{Name: "name", Message: utf}}},
		{"lone high surrogate", `{"name":"x\ud800"}`, []invalid.Field{{Name: "name", Message: surr}}},
		{"lone low surrogate", `{"name":"\uDC00x"}`, []invalid.Field{{Name: "name", Message: surr}}},
		{"high then non-low", `{"name":"\ud800\u0041"}`, []invalid.Field{{Name: "name", Message: surr}}},
		{"two highs", `{"name":"\ud800\ud800\udc00"}`, []invalid.Field{{Name: "name", Message: surr}}},
		{"nested typed", `{"warm":{"holdMessage":"\u0000"}}`, []invalid.Field{{Name: "warm.holdMessage", Message: nul}}},
		{"array of objects", `{"routes":[{"to_number":"+1"},{"condition":"\ud800"}]}`,
			[]invalid.Field{{Name: "routes[1].condition", Message: surr}}},
		{"free-form deep", `{"vars":{"a":[1,{"b":"\u0000"}]}}`, []invalid.Field{{Name: "vars.a[1].b", Message: nul}}},
		{"array element", `{"ids":["ok","\u0000"]}`, []invalid.Field{{Name: "ids[1]", Message: nul}}},
		{"bad key", `{"vars":{"k\u0000":"v"}}`, []invalid.Field{{Name: `vars.k\u0000`, Message: "key " + nul}}},
		{"bad key bytes", "{\"vars\":{\"k\xff\":1}}", []invalid.Field{{Name: `vars.k\xff`, Message: "key " + utf}}},
		{"bad key surrogate", `{"vars":{"\udfff":1}}`, []invalid.Field{{Name: `vars.\udfff`, Message: "key " + surr}}},
		{"under a bad key", `{"vars":{"k\u0000":{"x":"\u0000"}}}`, []invalid.Field{
			{Name: `vars.k\u0000`, Message: "key " + nul}, {Name: `vars.k\u0000.x`, Message: nul}}},
		{"unknown field", `{"zzz":"\u0000"}`, []invalid.Field{{Name: "zzz", Message: nul}}},
		{"wrong type", `{"count":"\u0000"}`, []invalid.Field{{Name: "count", Message: nul}}},
		{"every one", "{\"name\":\"\\u0000\",\"ids\":[\"\xff\"],\"vars\":{\"a\":\"\\ud800\"}}", []invalid.Field{
			{Name: "name", Message: nul}, {Name: "ids[0]", Message: utf}, {Name: "vars.a", Message: surr}}},
	} {
		var r request
		err := Decode([]byte(c.body), &r)
		if diff := cmp.Diff(c.want, textFields(t, err)); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", c.name, diff)
		}
		if r.Name.Set || r.Vars.Set || r.IDs.Set {
			t.Errorf("%s: decoded despite bad text: %+v", c.name, r)
		}
	}
	for _, body := range []string{
		`{"name":"caf\u00e9 \ud83d\ude00 \\u0000 \"q\" \/ \b\f\n\r\t"}`,
		`{"name":"café 😀 日本","vars":{"ключ":["значение",1,true,null,{"x":-1.5e3}]}}`,
		`{"vars":{},"ids":[],"name":""}`,
		"{\"name\":\"\xef\xbf\xbd\xf4\x8f\xbf\xbf\"}", // U+FFFD and U+10FFFF as sent are valid
	} {
		var r request
		if err := Decode([]byte(body), &r); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// Against encoding/json, on any valid JSON: bad text is found exactly
// when decoding yields a NUL or a U+FFFD that was not sent (encoding/json
// puts one for each invalid byte and lone surrogate).
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{`{"a":"\u0000"}`, `["\ud800\udc00",1,{"\u00e9":null}]`, "\"\xff\"", `{"a":[{"b":"c"}]}`, `"\ud800\u0041"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var l invalid.List
		checkText(data, &l)
		if bytes.Contains(bytes.ToLower(data), []byte("fffd")) || bytes.Contains(data, []byte("\xef\xbf\xbd")) {
			return // a U+FFFD may have been sent
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber() // 1e700 is valid JSON, but no float64
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if bad := hasBadText(v); bad != !l.Empty() {
			t.Fatalf("%q: decoded bad text %v, found %v", data, bad, l.Err())
		}
	})
}

// hasBadText reports whether a decoded JSON value holds a NUL or U+FFFD in
// any string or key.
func hasBadText(v any) bool {
	bad := func(s string) bool { return strings.ContainsAny(s, "\x00\ufffd") }
	switch v := v.(type) {
	case string:
		return bad(v)
	case []any:
		return slices.ContainsFunc(v, hasBadText)
	case map[string]any:
		for k, x := range v {
			if bad(k) || hasBadText(x) {
				return true
			}
		}
	}
	return false
}
