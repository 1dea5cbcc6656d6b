package opt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/invalid"
)

func dup(name string) invalid.Field { return invalid.Field{Name: name, Message: duplicateKey} }

// A key given twice in one object is refused wherever the object is, named
// by its path, and nothing is decoded.
func TestDecodeRefusesDuplicateKeys(t *testing.T) {
	many := func(dupAt int) string { // one object of 40 keys, past manyKeys
		var b strings.Builder
		b.WriteString(`{"vars":{`)
		for i := range 40 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		fmt.Fprintf(&b, `"k%d":true}}`, dupAt)
		return b.String()
	}
	for _, c := range []struct {
		name, body string
		want       []invalid.Field
	}{
		{"top level", `{"name":"first","name":"second"}`, []invalid.Field{dup("name")}},
		{"top level, apart", `{"name":"first","count":1,"ids":[],"name":"second"}`, []invalid.Field{dup("name")}},
		{"same value", `{"name":"a","name":"a"}`, []invalid.Field{dup("name")}},
		{"null then value", `{"folderId":null,"folderId":"x"}`, []invalid.Field{dup("folderId")}},
		{"nested typed", `{"warm":{"holdMessage":"a","holdMusicEnabled":true,"holdMessage":"b"}}`,
			[]invalid.Field{dup("warm.holdMessage")}},
		{"nested typed object twice", `{"warm":{"holdMessage":"a"},"warm":{"holdMessage":"b"}}`, []invalid.Field{dup("warm")}},
		{"array of typed objects", `{"routes":[{"to_number":"+1"},{"to_number":"+1","condition":"c","to_number":"+2"}]}`,
			[]invalid.Field{dup("routes[1].to_number")}},
		{"free-form", `{"vars":{"x":1,"y":2,"x":3}}`, []invalid.Field{dup("vars.x")}},
		{"free-form deep", `{"vars":{"a":[1,{"b":{"c":1,"c":[]}}]}}`, []invalid.Field{dup("vars.a[1].b.c")}},
		{"free-form array of objects", `{"vars":{"list":[{"k":1},{"k":1,"k":2}]}}`, []invalid.Field{dup("vars.list[1].k")}},
		{"escaped equal", `{"name":"a","n\u0061me":"b"}`, []invalid.Field{dup("name")}},
		{"escaped equal, both", `{"vars":{"\u0078":1,"\u0078":2}}`, []invalid.Field{dup("vars.x")}},
		{"escaped equal, non-ASCII", `{"vars":{"café":1,"caf\u00e9":2}}`, []invalid.Field{dup("vars.café")}},
		{"escaped equal, surrogate pair", `{"vars":{"😀":1,"\ud83d\ude00":2}}`, []invalid.Field{dup("vars.😀")}},
		{"escaped equal, one-letter escapes", `{"vars":{"a/b":1,"a\/b":2,"q\"":1,"q\u0022":2}}`,
			[]invalid.Field{dup("vars.a/b"), dup(`vars.q"`)}},
		{"three times, named once", `{"name":"a","name":"b","name":"c"}`, []invalid.Field{dup("name")}},
		{"every one, in order", `{"ids":[],"vars":{"z":1,"z":2},"name":"a","ids":[]}`,
			[]invalid.Field{dup("vars.z"), dup("ids")}},
		{"unknown field twice", `{"zzz":1,"zzz":2}`, []invalid.Field{dup("zzz")}},
		{"empty key", `{"vars":{"":1,"":2}}`, []invalid.Field{dup("vars.")}},
		{"many keys", many(37), []invalid.Field{dup("vars.k37")}},
		{"many keys, first", many(0), []invalid.Field{dup("vars.k0")}},
		{"before bad text", `{"name":"\u0000","name":"b"}`, []invalid.Field{dup("name")}},
		{"before a wrong type", `{"count":"x","count":1}`, []invalid.Field{dup("count")}},
		{"whitespace", "{ \"vars\" : { \"x\" : 1 ,\n\t\"x\" : 2 } }", []invalid.Field{dup("vars.x")}},
	} {
		var r request
		err := Decode([]byte(c.body), &r)
		if diff := cmp.Diff(c.want, fieldsOfErr(t, err)); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", c.name, diff)
		}
		if r.Name.Set || r.Vars.Set || r.Routes.Set || r.Warm.Set || r.Count.Set {
			t.Errorf("%s: decoded despite a duplicate key: %+v", c.name, r)
		}
	}
}

// The same key in different objects, or keys that only look alike, are
// not duplicates.
func TestDecodeAcceptsDistinctKeys(t *testing.T) {
	many := `{"vars":{`
	for i := range 40 {
		many += fmt.Sprintf(`"k%d":{"k%d":%d},`, i, i, i)
	}
	many += `"k":1}}`
	for _, body := range []string{
		`{"routes":[{"to_number":"+1","condition":"a"},{"to_number":"+2","condition":"b"}],"warm":{"holdMessage":"x"}}`,
		`{"name":"a","vars":{"name":"b","x":{"name":"c","x":{"x":1}},"l":[{"x":1},{"x":2}],"m":[[{"x":1}],[{"x":1}]]}}`,
		`{"vars":{"x":1,"X":2,"x ":3,"xx":4,"\u0079x":5,"yx ":8,"":6," ":7}}`,
		`{"vars":{"\u00e9":1,"e\u0301":2}}`, // precomposed and combining: different text
		`{"vars":{"a\\u0061":1,"aa":2}}`,    // an escaped backslash, then text
		many,
	} {
		var r request
		if err := Decode([]byte(body), &r); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// A key that is refused for its text is not also compared: written out
// as sent it may equal another key's text.
func TestDuplicateKeysLeaveBadKeysToText(t *testing.T) {
	var r request
	err := Decode([]byte(`{"vars":{"k\u0000":1,"k\\u0000":2}}`), &r)
	want := []invalid.Field{{Name: `vars.k\u0000`, Message: "key " + invalid.TextNUL}}
	if diff := cmp.Diff(want, textFields(t, err)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

// Deep nesting: the path of a duplicate far down is named in full, and a
// key reused at every level is fine.
func TestDuplicateKeysDeep(t *testing.T) {
	const depth = 500
	open := strings.Repeat(`{"a":[`, depth)
	shut := strings.Repeat(`]}`, depth)
	if err := CheckDuplicateKeys([]byte(open + `{"a":1}` + shut)); err != nil {
		t.Fatalf("the same key at every depth: %v", err)
	}
	err := CheckDuplicateKeys([]byte(open + `{"a":1,"b":2,"a":3}` + shut))
	want := []invalid.Field{dup(strings.Repeat("a[0].", depth) + "a")}
	if diff := cmp.Diff(want, fieldsOfErr(t, err)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestCheckDuplicateKeys(t *testing.T) {
	for _, c := range []struct {
		body string
		want []invalid.Field // nil: no error
	}{
		{`{"a":1}`, nil},
		{`not json`, nil}, // the caller's decoding says so
		{`{"a":1,"a":2`, nil},
		{`"x"`, nil},
		{`{"variables":{"x":1},"variables":{"x":2}}`, []invalid.Field{dup("variables")}},
		{`[{"id":1},{"id":2,"id":3}]`, []invalid.Field{dup("[1].id")}},
		{` {"a":{"b":1,"b":2}} `, []invalid.Field{dup("a.b")}},
	} {
		err := CheckDuplicateKeys([]byte(c.body))
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		if diff := cmp.Diff(c.want, fieldsOfErr(t, err)); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", c.body, diff)
		}
	}
}

// Against encoding/json's tokens, on any valid JSON whose text is good
// (a bad key is compared by the text check instead): the duplicates found
// are exactly the keys met twice in one object, in document order.
func FuzzDuplicateKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `[{"a":{"b":1,"\u0062":2}},{"a":1}]`, `{"x":[{"y":1,"y":2,"y":3}],"x":0}`,
		`{"é":1,"\u00e9":2,"e":3}`, `{"":{"":1,"":2}}`, `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var text, dups invalid.List
		scan(data, &text, &dups)
		if !text.Empty() {
			return
		}
		var got []string
		if err := decodeErr(&dups); err != nil {
			for _, f := range err.(*DecodeError).Fields {
				got = append(got, f.Name)
			}
		}
		if want := tokenDuplicates(t, data); !slices.Equal(got, want) {
			t.Fatalf("%q: found %q, want %q", data, got, want)
		}
	})
}

// tokenDuplicates names the keys of valid JSON met twice in one object,
// each once, by reading encoding/json's tokens.
func tokenDuplicates(t *testing.T, data []byte) []string {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var found []string
	var walk func(path string)
	token := func() json.Token {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	walk = func(path string) {
		switch token() {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k := token().(string)
				at := invalid.Join(path, k)
				if seen[k] && !slices.Contains(found, at) {
					found = append(found, at)
				}
				seen[k] = true
				walk(at)
			}
			token()
		case json.Delim('['):
			for i := 0; d.More(); i++ {
				walk(invalid.Index(path, i))
			}
			token()
		}
	}
	walk("")
	return found
}

func TestUnmarshal(t *testing.T) {
	var v map[string]any
	err := Unmarshal([]byte(`{"to_number":"+1","to_number":"+2"}`), &v)
	if diff := cmp.Diff([]invalid.Field{dup("to_number")}, fieldsOfErr(t, err)); diff != "" || v != nil {
		t.Errorf("fields (-want +got):\n%s\nv = %v, want untouched", diff, v)
	}
	if err := Unmarshal([]byte(`{"a":`), &v); err == nil {
		t.Error("invalid JSON: no error")
	}
	if err := Unmarshal([]byte(`{"a":{"b":1},"c":[{"b":2}]}`), &v); err != nil || len(v) != 2 {
		t.Errorf("%v, %v", v, err)
	}
}
